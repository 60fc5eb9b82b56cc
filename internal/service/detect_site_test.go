package service

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/sitegen"
)

// A real generated site stored through site.Ingest into the service's blob
// store is recognised from its manifest, with the tool's own figures.
func TestDetectStoredSite(t *testing.T) {
	for _, c := range []struct {
		gen  string
		site func(testing.TB) sitegen.Site
	}{
		{detect.CoveragePy, sitegen.CoveragePy},
		{detect.Playwright, sitegen.Playwright},
	} {
		gs := c.site(t)
		s, _ := newLocal(t, t.TempDir(), Config{})
		var parts []site.Part
		for _, f := range gs.Files {
			parts = append(parts, site.Part{Name: f, Open: func() (io.ReadCloser, error) {
				return os.Open(filepath.Join(gs.Dir, filepath.FromSlash(f)))
			}})
		}
		m, err := site.Ingest(context.Background(), s.blobs, site.Parts(parts...), site.Options{ManifestKey: site.ManifestKey("1"), Root: ".", TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		gen, sum := s.detectSite(context.Background(), m)
		if gen != c.gen || sum == nil {
			t.Fatalf("got %q %+v, want %q with figures", gen, sum, c.gen)
		}
		got, _ := json.Marshal(sum)
		want, _ := json.Marshal(gs.Want)
		if string(got) != string(want) {
			t.Errorf("%s: summary %s, want %s", c.gen, got, want)
		}
	}
}
