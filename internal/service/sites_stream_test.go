package service

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// A site read as it arrived whose files were all stored already, one of
// which GC removed before the commit, is ingested again from the staged
// copy: the report is whole.
func TestStreamedSiteAfterGCIsWhole(t *testing.T) {
	ctx := context.Background()
	s, _ := newLocal(t, t.TempDir(), Config{}) // GC grace 0
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	files := map[string]string{"index.html": "<h1>cov</h1>", "style.css": "body{}", "app.js": "let x = 1"}
	for _, name := range []string{"app.js", "index.html", "style.css"} {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[name]))})
		io.WriteString(tw, files[name])
	}
	tw.Close()
	upload := func(streamed bool) (report.Report, error) {
		t.Helper()
		st, err := s.Stage(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Discard()
		in := SiteUpload{ProjectID: p.ID, FileType: report.HTML, FileName: "cov.tar", Archive: st, Format: "tar"}
		if streamed {
			if in.Streamed, err = s.StageSiteStream(ctx, bytes.NewReader(b.Bytes()), "tar"); err != nil {
				t.Fatal(err)
			}
			// The first site's report goes, and GC with it removes the
			// files the streamed read found stored.
			if err := s.DeleteReport(ctx, 1); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(files["index.html"]))
			if _, err := s.blobs.Stat(ctx, site.ObjectKey(hex.EncodeToString(sum[:]))); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("GC left the first site's files: %v", err)
			}
		}
		return s.CommitSite(ctx, in)
	}
	if _, err := upload(false); err != nil {
		t.Fatal(err)
	}
	rep, err := upload(true)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.SiteManifest(ctx, rep.ID)
	if err != nil || len(m.Files) != 3 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	for _, f := range m.Files {
		o, err := s.OpenSiteFile(ctx, rep.ID, f)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		got, _ := io.ReadAll(o)
		o.Close()
		if string(got) != files[f.Path] {
			t.Fatalf("%s = %q", f.Path, got)
		}
	}
}
