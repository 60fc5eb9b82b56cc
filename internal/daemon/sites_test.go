package daemon

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"testing"
)

// TestSitesBackupRestoreCheck: a site report survives check (its manifest
// and content objects are neither missing nor orphans) and an offline
// backup and restore (the content objects travel with the manifest).
func TestSitesBackupRestoreCheck(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "sites")
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	files := map[string]string{"index.html": "<a href=b.html>b</a>", "b.html": "<p>b</p>", "css/s.css": "p{}"}
	for name, data := range files {
		w, _ := zw.Create("htmlcov/" + name)
		io.WriteString(w, data)
	}
	zw.Close()
	st, rep, e, err := upload(httpClient, base, proj.ID, "html", "htmlcov.zip", zb.Bytes())
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload: %d %v %v", st, e, err)
	}
	stop()

	rep0, err := Check(context.Background(), c, false)
	if err != nil || !rep0.Clean(false) {
		t.Fatalf("check with a site: %+v %v", rep0, err)
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	runCLI(t, 0, "backup", "--out", out, "--data-dir", dir)
	restored := filepath.Join(t.TempDir(), "r")
	runCLI(t, 0, "restore", "--in", out, "--data-dir", restored)
	rc := testConfig(t, restored)
	if r, err := Check(context.Background(), rc, false); err != nil || !r.Clean(false) {
		t.Fatalf("check of the restored store: %+v %v", r, err)
	}
	s2, stop2 := startServer(t, rc)
	defer stop2()
	svc := s2.Service()
	m, err := svc.SiteManifest(context.Background(), rep.ID)
	if err != nil || len(m.Files) != len(files) || m.Entry != "index.html" {
		t.Fatalf("restored manifest %+v %v", m, err)
	}
	for _, f := range m.Files {
		o, err := svc.OpenSiteFile(context.Background(), rep.ID, f)
		if err != nil {
			t.Fatalf("restored %s: %v", f.Path, err)
		}
		b, _ := io.ReadAll(o)
		o.Close()
		if string(b) != files[f.Path] {
			t.Fatalf("restored %s: %q", f.Path, b)
		}
	}
}
