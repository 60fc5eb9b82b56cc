package service

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// SweepSites (grace 0) removes a manifest no row owns and the content
// only it referenced, and keeps a committed site whole.
func TestSweepSitesRemovesOnlyUnownedManifests(t *testing.T) {
	ctx := context.Background()
	s, _ := newLocal(t, t.TempDir(), Config{})
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	part := func(name, body string) SitePart {
		return SitePart{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
	}
	live, err := s.CommitSite(ctx, SiteUpload{ProjectID: p.ID, FileType: report.HTML, FileName: "live", Root: ".",
		Parts: []SitePart{part("index.html", "<h1>live</h1>")}})
	if err != nil {
		t.Fatal(err)
	}
	// An ingest whose row never committed: its manifest and its content.
	orphan, err := site.Ingest(ctx, s.blobs, site.Parts(site.Part{Name: "index.html", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("<h1>orphan</h1>")), nil
	}}), site.Options{ManifestKey: site.ManifestKey("999"), TempDir: s.tempDir()})
	if err != nil {
		t.Fatal(err)
	}
	removed, st, err := s.SweepSites(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != site.ManifestKey("999") {
		t.Errorf("removed manifests %v, want only %s", removed, site.ManifestKey("999"))
	}
	if st.Removed == 0 {
		t.Errorf("site GC removed nothing, want the orphan's content %s", orphan.Files[0].Key())
	}
	if _, err := s.blobs.Stat(ctx, orphan.Files[0].Key()); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("the orphan's content: %v, want it gone", err)
	}
	m, err := s.SiteManifest(ctx, live.ID)
	if err != nil {
		t.Fatalf("the live site's manifest after the sweep: %v", err)
	}
	f, _ := m.Lookup("index.html")
	o, err := s.OpenSiteFile(ctx, live.ID, f)
	if err != nil {
		t.Fatalf("the live site's file after the sweep: %v", err)
	}
	got, _ := io.ReadAll(o)
	o.Close()
	if !bytes.Equal(got, []byte("<h1>live</h1>")) {
		t.Errorf("the live site's file reads %q", got)
	}
}
