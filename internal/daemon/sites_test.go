package daemon

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/testfixture"
)

// siteZip zips files below one top folder, in name order.
func siteZip(t *testing.T, files map[string]string) []byte {
	return testfixture.Zip(t, "site/", files)
}

// keysBelow lists a blob store's keys below prefix.
func keysBelow(t *testing.T, st blob.Store, prefix string) []string {
	t.Helper()
	var out []string
	if err := st.Walk(context.Background(), prefix, func(i blob.Info) error { out = append(out, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPostgresS3Sites: with storage: postgres+s3 a site's files and
// manifest go to the bucket (nothing to uploads/), read back through the
// content origin's service methods, are stored once across uploads, and
// go with the last site that references them; uploads and deletes running
// together (GC with no grace, so only the ingest/GC lock keeps an ingest's
// reused objects alive) leave every surviving site whole.
func TestPostgresS3Sites(t *testing.T) {
	dir := t.TempDir()
	c, bucket := s3Config(t, dir)
	c.Sites.GCGrace = 0
	srv, stop := startServer(t, c)
	defer stop()
	base := "http://" + srv.Addr()
	svc := srv.Service()
	ctx := context.Background()
	proj := createProject(t, base, "s3 sites")
	shared := map[string]string{"index.html": "<p>index</p>", "app.js": "console.log('shared')", "data/x.json": "{}"}
	put := func(extra string) int64 {
		files := map[string]string{"own.txt": extra}
		for k, v := range shared {
			files[k] = v
		}
		st, rep, e, err := upload(httpClient, base, proj.ID, "html", "site.zip", siteZip(t, files))
		if err != nil || st != http.StatusCreated {
			t.Errorf("upload %q: %d %v %v", extra, st, e, err)
			return 0
		}
		return rep.ID
	}
	whole := func(id int64, extra string) {
		t.Helper()
		m, err := svc.SiteManifest(ctx, id)
		if err != nil {
			t.Fatalf("site %d: %v", id, err)
		}
		for _, f := range m.Files {
			o, err := svc.OpenSiteFile(ctx, id, f)
			if err != nil {
				t.Fatalf("site %d, %s: %v", id, f.Path, err)
			}
			b, _ := io.ReadAll(o)
			o.Close()
			want := shared[f.Path]
			if f.Path == "own.txt" {
				want = extra
			}
			if string(b) != want {
				t.Fatalf("site %d, %s: %q, want %q", id, f.Path, b, want)
			}
		}
	}
	a, b := put("a"), put("b")
	whole(a, "a")
	whole(b, "b")
	if got := keysBelow(t, bucket, "cas/"); len(got) != len(shared)+2 {
		t.Fatalf("objects in the bucket: %v", got)
	}
	if got := keysBelow(t, bucket, "sites/"); len(got) != 2 {
		t.Fatalf("manifests in the bucket: %v", got)
	}
	if n := countFiles(t, filepath.Join(dir, "uploads")); n != 0 {
		t.Fatalf("%d files in uploads/ with postgres+s3", n)
	}
	del := func(id int64) {
		req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/reports/%d", base, id), nil)
		resp, err := httpClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Errorf("delete %d: %v %v", id, resp, err)
			return
		}
		resp.Body.Close()
	}
	del(a)
	if got := keysBelow(t, bucket, "cas/"); len(got) != len(shared)+1 {
		t.Fatalf("after deleting a: objects %v", got)
	}
	whole(b, "b")

	// Uploads of the shared files while sites that hold them are deleted.
	var wg sync.WaitGroup
	ids := make(chan int64, 64)
	var mu sync.Mutex
	kept := map[int64]string{}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				extra := fmt.Sprintf("w%d-%d", w, i)
				id := put(extra)
				if id == 0 {
					return
				}
				if i%2 == 0 {
					ids <- id
				} else {
					mu.Lock()
					kept[id] = extra
					mu.Unlock()
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		for id := range ids {
			del(id)
		}
		close(done)
	}()
	wg.Wait()
	close(ids)
	<-done
	for id, extra := range kept {
		whole(id, extra)
	}
	whole(b, "b")
	if got := keysBelow(t, bucket, "cas/"); len(got) != len(shared)+1+len(kept) {
		t.Fatalf("after the churn: %d objects, want %d", len(got), len(shared)+1+len(kept))
	}
}

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
