package service

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sitegen"
)

// A real generated site uploaded as parts is recognised after ingest from
// its manifest: the report (as committed and as read back) carries the
// generator and the figures the tool itself reported.
func TestCommitSiteDetects(t *testing.T) {
	ctx := context.Background()
	s, _ := newLocal(t, t.TempDir(), Config{})
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gen  string
		site func(testing.TB) sitegen.Site
	}{
		{detect.CoveragePy, sitegen.CoveragePy},
		{detect.Playwright, sitegen.Playwright},
	} {
		gs := c.site(t)
		var parts []SitePart
		for _, f := range gs.Files {
			parts = append(parts, SitePart{Name: f, Open: func() (io.ReadCloser, error) {
				return os.Open(filepath.Join(gs.Dir, filepath.FromSlash(f)))
			}})
		}
		rep, err := s.CommitSite(ctx, SiteUpload{ProjectID: p.ID, FileType: report.HTML, FileName: c.gen, Root: ".", Parts: parts})
		if err != nil {
			t.Fatal(err)
		}
		back, err := s.meta.Report(ctx, rep.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(gs.Want)
		for _, r := range []report.Report{rep, back.Report} {
			got, _ := json.Marshal(r.Summary)
			if r.Generator != c.gen || string(got) != string(want) {
				t.Errorf("site report: %q %s, want %q %s", r.Generator, got, c.gen, want)
			}
		}
	}
}
