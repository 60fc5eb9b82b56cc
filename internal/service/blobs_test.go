package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// plainStore is the local store behind nothing but blob.Store (plus the
// local paths engines need and the file net/http sends), so the service
// takes the generic paths an S3 store would: Put streams the staged file,
// Copy goes through Open+Put, prefix deletes through Walk+Delete. It logs
// every call.
type plainStore struct {
	s   blob.Store
	mu  sync.Mutex
	ops []string
}

func (p *plainStore) log(op, key string) {
	p.mu.Lock()
	p.ops = append(p.ops, op+" "+key)
	p.mu.Unlock()
}

func (p *plainStore) Put(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) (blob.Info, error) {
	p.log("put", key)
	return p.s.Put(ctx, key, r, opt)
}
func (p *plainStore) Open(ctx context.Context, key string) (blob.Object, error) {
	return p.s.Open(ctx, key)
}
func (p *plainStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	return p.s.Stat(ctx, key)
}
func (p *plainStore) Delete(ctx context.Context, key string) error {
	p.log("delete", key)
	return p.s.Delete(ctx, key)
}
func (p *plainStore) Walk(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	return p.s.Walk(ctx, prefix, fn)
}
func (p *plainStore) LocalPath(key string) (string, error) { return p.s.(blob.Pather).LocalPath(key) }

func pngBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Report files and covers go through the blob store, with the local
// store's fast paths and without them, to the same files and API paths.
func TestFilesGoThroughTheBlobStore(t *testing.T) {
	for _, generic := range []bool{false, true} {
		name := "local"
		if generic {
			name = "generic"
		}
		t.Run(name, func(t *testing.T) { blobLifecycle(t, generic) })
	}
}

func blobLifecycle(t *testing.T, generic bool) {
	dir := t.TempDir()
	s, fd := newLocal(t, dir, Config{})
	var plain *plainStore
	if generic {
		plain = &plainStore{s: fd.Blobs()}
		s.blobs = plain
	}
	ctx := context.Background()
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(dir, "uploads", filepath.FromSlash(rel)))
		return err == nil
	}

	cover := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t))
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "p", CoverImage: &cover})
	if err != nil {
		t.Fatal(err)
	}
	if p.CoverImage == nil || !strings.HasPrefix(*p.CoverImage, "/uploads/covers/1/") {
		t.Fatalf("cover path %v", p.CoverImage)
	}
	coverKey := strings.TrimPrefix(*p.CoverImage, "/uploads/")
	if !exists(coverKey) {
		t.Fatalf("cover %s not stored", coverKey)
	}
	o, err := s.OpenStatic(*p.CoverImage)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()

	html := "<!doctype html><html><body><p>hello</p></body></html>"
	r, err := s.UploadReport(ctx, report.ReportUpload{ProjectID: p.ID, FileType: report.HTML,
		File: report.Upload{FileName: "r.html", Body: strings.NewReader(html)}})
	if err != nil {
		t.Fatal(err)
	}
	if r.FilePath != "/uploads/reports/1.html" || !exists("reports/1.html") {
		t.Fatalf("report stored at %s", r.FilePath)
	}
	rec, o, err := s.OpenReport(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The local store's object is the file itself, for sendfile.
	if f, ok := blob.OSFile(o); !ok || f.Name() != filepath.Join(dir, "uploads", "reports", "1.html") || o.Info().Size != int64(len(html)) || rec.Size != int64(len(html)) {
		t.Errorf("opened %v (%v), %d bytes", f, ok, o.Info().Size)
	}
	o.Close()
	if job, done, err := s.job(ctx, rec); err != nil || job.Src != filepath.Join(dir, "uploads", "reports", "1.html") {
		t.Errorf("engine source %q, %v", job.Src, err)
	} else {
		done()
	}

	// Retype: a second name, the row, then the old name goes.
	md, mdType := "r.md", report.MD
	if _, err := s.UpdateReport(ctx, r.ID, report.ReportUpdate{FileName: &md, FileType: &mdType}); err != nil {
		t.Fatal(err)
	}
	if exists("reports/1.html") || !exists("reports/1.md") {
		t.Error("retype did not move the file")
	}
	if _, err := s.GetReport(ctx, r.ID); err != nil {
		t.Errorf("detail after retype: %v", err)
	}

	if err := s.DeleteReport(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if exists("reports/1.md") {
		t.Error("deleted report's file left")
	}
	if _, err := s.OpenStatic("/uploads/reports/1.md"); !report.IsKind(err, report.NotFound) {
		t.Errorf("static of a deleted file: %v", err)
	}
	if err := s.DeleteProject(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if exists(coverKey) {
		t.Error("cover left")
	}
	// Through the fast path the folder goes too (as before the blob store);
	// generic deletes leave the empty folder to the start-up sweep.
	if !generic && exists("covers/1") {
		t.Error("cover folder left")
	}
	if !exists("reports") || !exists("covers") {
		t.Error("a top folder went")
	}
	// Nothing staged is left behind, whichever way the bytes were placed.
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ holds %v", left)
	}
	if generic {
		want := []string{"put " + coverKey, "put reports/1.html", "put reports/1.md", "delete reports/1.html", "delete reports/1.md", "delete " + coverKey}
		if !slices.Equal(plain.ops, want) {
			t.Errorf("store calls %q, want %q", plain.ops, want)
		}
	}
	// Paths outside the uploads are not keys.
	for _, bad := range []string{"/uploads/../reportd.db", "/etc/passwd", "/uploads/", "/uploads/reports/../../reportd.db"} {
		if _, err := s.OpenStatic(bad); !report.IsKind(err, report.NotFound) {
			t.Errorf("OpenStatic(%q) = %v", bad, err)
		}
		if _, err := files.Key(bad); err == nil {
			t.Errorf("Key(%q) accepted", bad)
		}
	}
}

// newLocal is a Service on a bbolt store and a data directory in dir, both
// closed when t ends.
func newLocal(t *testing.T, dir string, cfg Config) (*Service, *files.Dir) {
	t.Helper()
	fd, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fd.Close() })
	store, err := boltstore.Open(filepath.Join(dir, "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s := New(cfg, store, fd, nil)
	t.Cleanup(func() { s.Close() }) // first: stops background work
	return s, fd
}

// remoteStore has no local paths, like S3: the engines get a copy in tmp/,
// its staging area (the daemon gives S3 <data>/tmp, s3store.Config.TempDir).
type remoteStore struct {
	blob.Store
	tmp string
}

func (r remoteStore) TempDir() string { return r.tmp }

// A store without local files: the engines read a copy fetched into tmp/,
// removed when the conversion is done; the start-up sweep keeps the store.
func TestEnginesReadACopyOfARemoteObject(t *testing.T) {
	dir := t.TempDir()
	_, fd := newLocal(t, dir, Config{})
	data := t.TempDir()
	s, _ := newLocal(t, data, Config{Blobs: remoteStore{fd.Blobs(), filepath.Join(data, "tmp")}})
	ctx := context.Background()
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	md := "# hello\n"
	r, err := s.UploadReport(ctx, report.ReportUpload{ProjectID: p.ID, FileType: report.MD,
		File: report.Upload{FileName: "r.md", Body: strings.NewReader(md)}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.meta.Report(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	job, done, err := s.job(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(job.Src) != filepath.Join(s.files.Base(), "tmp") || !strings.HasSuffix(job.Src, ".md") {
		t.Errorf("copy at %s", job.Src)
	}
	if b, err := os.ReadFile(job.Src); err != nil || string(b) != md {
		t.Errorf("copy holds %q, %v", b, err)
	}
	done()
	if _, err := os.Stat(job.Src); !os.IsNotExist(err) {
		t.Errorf("copy left after done: %v", err)
	}
	if _, err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fd.Blobs().Stat(ctx, "reports/1.md"); err != nil {
		t.Errorf("sweep touched the store: %v", err)
	}
}

// downStore is a store whose reads fail as an unreachable S3 would.
type downStore struct{ blob.Store }

func (downStore) Open(context.Context, string) (blob.Object, error) {
	return nil, blob.StorageErr(errors.New("connection refused"), "s3 read failed")
}

// A store that cannot be read answers StorageError, never NotFound: an
// outage must not look like deleted reports. A path with no file is NotFound.
func TestOpenFailureKeepsTheStoresKind(t *testing.T) {
	dir := t.TempDir()
	s, fd := newLocal(t, dir, Config{})
	ctx := context.Background()
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.UploadReport(ctx, report.ReportUpload{ProjectID: p.ID, FileType: report.MD,
		File: report.Upload{FileName: "r.md", Body: strings.NewReader("# r")}})
	if err != nil {
		t.Fatal(err)
	}
	s.blobs = downStore{fd.Blobs()}
	if _, _, err := s.OpenReport(ctx, r.ID); !report.IsKind(err, report.Storage) {
		t.Errorf("a store that is down: %v, want StorageError", err)
	}
	if _, err := s.OpenStatic("/uploads/reports/1.md"); !report.IsKind(err, report.Storage) {
		t.Errorf("a static file from a store that is down: %v, want StorageError", err)
	}
	s.blobs = fd.Blobs()
	if _, err := s.OpenStatic("/uploads/reports/9.md"); !report.IsKind(err, report.NotFound) {
		t.Errorf("a static file that does not exist: %v, want NotFoundError", err)
	}
}
