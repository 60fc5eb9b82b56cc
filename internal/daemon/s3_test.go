package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/testserver"
)

// s3Config is testConfig with storage: postgres+s3 on a fresh database and
// a fresh bucket of the throwaway versitygw.
func s3Config(t *testing.T, dataDir string) (config.Config, *s3store.Store) {
	t.Helper()
	c := testConfig(t, dataDir)
	b := testserver.Bucket(t)
	c.Storage, c.Postgres.DSN = config.StoragePostgresS3, testserver.DSN(t)
	c.S3.Endpoint, c.S3.Bucket, c.S3.AccessKey, c.S3.SecretKey = b.Endpoint, b.Bucket, b.AccessKey, b.SecretKey
	c.S3.TLS, c.S3.Prefix = false, "rd"
	st, err := s3store.New(s3store.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey, Region: c.S3.Region, Prefix: "rd"})
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// TestPostgresS3Storage: a daemon with storage: postgres+s3 keeps report
// files and covers in the bucket (none in data_dir's uploads/), serves them
// with ranges, converts a Markdown report from a fetched copy, deletes the
// object with the report, and after a restart on the same database and
// bucket serves everything again.
func TestPostgresS3Storage(t *testing.T) {
	dir := t.TempDir()
	c, bucket := s3Config(t, dir)
	ctx := context.Background()
	srv, stop := startServer(t, c)
	base := "http://" + srv.Addr()

	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"name":"s3","coverImage":"data:image/png;base64,%s"}`, base64.StdEncoding.EncodeToString(img.Bytes()))
	resp, err := httpClient.Post(base+"/api/projects", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var proj apiProject
	err = json.NewDecoder(resp.Body).Decode(&proj)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create project: %s %v", resp.Status, err)
	}
	if proj.CoverImage == nil || !strings.HasPrefix(*proj.CoverImage, "/uploads/covers/") {
		t.Fatalf("project: %+v", proj)
	}
	cover := *proj.CoverImage

	html := []byte("<!doctype html><html><body><h1>s3 html</h1><p>" + strings.Repeat("x", 3000) + "</p></body></html>")
	md := markdown("s3md", 2500)
	st, rh, e, err := upload(httpClient, base, proj.ID, "html", "r.html", html)
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload html: %d %+v %v", st, e, err)
	}
	st, rm, e, err := upload(httpClient, base, proj.ID, "md", "r.md", md)
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload md: %d %+v %v", st, e, err)
	}

	// In the bucket (below the prefix), not in data_dir's uploads/.
	for _, key := range []string{"reports/" + fmt.Sprint(rh.ID) + ".html", "reports/" + fmt.Sprint(rm.ID) + ".md", strings.TrimPrefix(cover, "/uploads/")} {
		if _, err := bucket.Stat(ctx, key); err != nil {
			t.Errorf("%s not in the bucket: %v", key, err)
		}
	}
	if n := countFiles(t, filepath.Join(dir, "uploads")); n != 0 {
		t.Errorf("data_dir/uploads holds %d files", n)
	}

	verify := func(base string) {
		t.Helper()
		var p apiProject
		getJSON(t, fmt.Sprintf("%s/api/projects/%d", base, proj.ID), &p)
		if p.ReportCount != 2 || p.TodayNewReports != 2 {
			t.Errorf("project: %+v, want reportCount 2 and todayNewReports 2", p)
		}
		var reps []apiReport
		getJSON(t, fmt.Sprintf("%s/api/reports?projectId=%d", base, proj.ID), &reps)
		if len(reps) != 2 {
			t.Fatalf("list: %+v", reps)
		}
		if got := getBody(t, fmt.Sprintf("%s/api/reports/%d/download", base, rm.ID)); !bytes.Equal(got, md) {
			t.Errorf("download md: %d bytes differ", len(got))
		}
		if got := getBody(t, base+cover); !bytes.Equal(got, img.Bytes()) {
			t.Errorf("cover: %d bytes differ", len(got))
		}
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/reports/%d/preview", base, rh.ID), nil)
		req.Header.Set("Range", "bytes=10-29")
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(got, html[10:30]) ||
			resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-29/%d", len(html)) {
			t.Errorf("preview range: %s %q %q", resp.Status, resp.Header.Get("Content-Range"), got)
		}
	}
	verify(base)

	// One real conversion, from a copy fetched into tmp/ and removed after.
	if pdf := getBody(t, fmt.Sprintf("%s/api/reports/%d/pdf", base, rm.ID)); !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatalf("pdf: %.40q", pdf)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp", "engine-*")); len(left) != 0 {
		t.Errorf("engine copies left in tmp/: %v", left)
	}

	// A third report, deleted: its object goes with it.
	st, rd, e, err := upload(httpClient, base, proj.ID, "md", "gone.md", markdown("gone", 100))
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload: %d %+v %v", st, e, err)
	}
	goneKey := fmt.Sprintf("reports/%d.md", rd.ID)
	if _, err := bucket.Stat(ctx, goneKey); err != nil {
		t.Fatalf("%s not in the bucket: %v", goneKey, err)
	}
	req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/reports/%d", base, rd.ID), nil)
	resp, err = httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("delete: %s", resp.Status)
	}
	if _, err := bucket.Stat(ctx, goneKey); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("deleted report's object: %v", err)
	}
	stop()

	// Restart on the same database and bucket, the secret from a file: the
	// start-up sweep leaves the bucket alone.
	c2 := c
	c2.S3.SecretKeyFile = filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(c2.S3.SecretKeyFile, []byte(c.S3.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c2.S3.SecretKey = ""
	srv2, _ := startServer(t, c2)
	verify("http://" + srv2.Addr())
}

// countFiles counts the regular files below root.
func countFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			n++
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n
}

// TestPostgresS3ConfigErrors: storage: postgres+s3 without a bucket or
// credentials, or with a wrong secret, fails naming the keys and never the
// secret key.
func TestPostgresS3ConfigErrors(t *testing.T) {
	const secret = "sEcReT-do-not-print"
	env := []string{"REPORTD_STORAGE=postgres+s3", "REPORTD_POSTGRES_DSN=postgres://a@b/c"}
	_, err := loadArgs(t, env)
	for _, key := range []string{"s3.endpoint", "s3.bucket", "s3.access_key", "s3.secret_key", "REPORTD_S3_BUCKET", "AWS_SECRET_ACCESS_KEY"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("nothing set: want %s in %v", key, err)
		}
	}
	_, err = loadArgs(t, append(env, "REPORTD_S3_ENDPOINT=h:1", "REPORTD_S3_ACCESS_KEY=a", "REPORTD_S3_SECRET_KEY="+secret))
	if err == nil || !strings.Contains(err.Error(), "s3.bucket") || strings.Contains(err.Error(), "s3.endpoint") || strings.Contains(err.Error(), secret) {
		t.Errorf("no bucket: %v", err)
	}
	c, err := loadArgs(t, append(env, "REPORTD_S3_ENDPOINT=h:1", "REPORTD_S3_BUCKET=b", "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY="+secret))
	if err != nil || c.S3.AccessKey != "a" || c.S3.SecretKey != secret || !c.S3.TLS || c.S3.Region != "us-east-1" || c.S3.PartSize != 16<<20 {
		t.Errorf("AWS_* credentials: %v %+v", err, c.S3.Region)
	}
	_, err = loadArgs(t, []string{"REPORTD_S3_BUCKET=b"})
	if err == nil || !strings.Contains(err.Error(), "postgres+s3") {
		t.Errorf("s3.* with storage: bolt: %v", err)
	}
	_, err = loadArgs(t, append(env, "REPORTD_S3_ENDPOINT=h:1", "REPORTD_S3_BUCKET=b", "REPORTD_S3_ACCESS_KEY=a", "REPORTD_S3_SECRET_KEY="+secret, "REPORTD_S3_PART_SIZE=1MiB"))
	if err == nil || !strings.Contains(err.Error(), "s3.part_size") {
		t.Errorf("small part size: %v", err)
	}

	// A wrong secret and a missing bucket on a real server.
	dir := t.TempDir()
	c, _ = s3Config(t, dir)
	c.S3.SecretKey = secret
	err = openAndClose(c)
	if err == nil || !strings.Contains(err.Error(), "s3.endpoint") || strings.Contains(err.Error(), secret) {
		t.Errorf("wrong secret: %v", err)
	}
	c, _ = s3Config(t, t.TempDir())
	c.S3.Bucket = "no-such-bucket"
	err = openAndClose(c)
	if err == nil || !strings.Contains(err.Error(), "s3.bucket") {
		t.Errorf("missing bucket: %v", err)
	}
}

// openAndClose opens a Server on c, closes what it opened, and returns
// Open's error.
func openAndClose(c config.Config) error {
	s := &Server{Config: c}
	err := s.Open(context.Background())
	s.Close()
	return err
}
