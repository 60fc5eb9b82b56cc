package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/blobtest"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// testPartSize is S3's minimum, so the suite's 64 MiB object is a
// 13-part upload and one part buffer stays under its allocation bound.
const testPartSize = s3store.MinPartSize

func newStore(t *testing.T, prefix string) *s3store.Store {
	t.Helper()
	cfg := testserver.Bucket(t)
	cfg.Prefix = prefix
	cfg.PartSize = testPartSize
	s, err := s3store.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func uploads(t *testing.T, s blob.Store) []string {
	t.Helper()
	ups, err := s.(*s3store.Store).Uploads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range ups {
		keys = append(keys, u.Key+" "+u.UploadID)
	}
	return keys
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newStore(t, "") }, blobtest.Options{Incomplete: uploads})
}

// The same suite with the store's objects under a prefix of the bucket.
func TestConformancePrefixed(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newStore(t, "site/a") },
		blobtest.Options{Incomplete: uploads, LargeSize: 12 << 20})
}

var ctx = context.Background()

func TestNewChecksConfig(t *testing.T) {
	for _, c := range []s3store.Config{
		{Bucket: "b"},
		{Endpoint: "127.0.0.1:1"},
		{Endpoint: "127.0.0.1:1", Bucket: "b", PartSize: 1 << 20},
		{Endpoint: "127.0.0.1:1", Bucket: "b", Prefix: "../x"},
	} {
		if _, err := s3store.New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

// pattern yields n deterministic bytes; fail, if set, is returned instead
// of the bytes from failAt on; before it, at is called once with the
// position.
type pattern struct {
	n, off, failAt int64
	fail           error
	at             func()
}

func (p *pattern) Read(b []byte) (int, error) {
	if p.fail != nil && p.off >= p.failAt {
		if p.at != nil {
			p.at()
			p.at = nil
		}
		return 0, p.fail
	}
	if p.off >= p.n {
		return 0, io.EOF
	}
	lim := p.n - p.off
	if p.fail != nil {
		lim = min(lim, p.failAt-p.off)
	}
	b = b[:min(int64(len(b)), lim)]
	for i := range b {
		b[i] = byte((p.off + int64(i)) * 31)
	}
	p.off += int64(len(b))
	return len(b), nil
}

func noUploads(t *testing.T, s *s3store.Store, what string) {
	t.Helper()
	if left := uploads(t, s); len(left) != 0 {
		t.Errorf("%s left open multipart uploads: %q", what, left)
	}
	if _, err := s.Stat(ctx, "big"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("%s left an object: %v", what, err)
	}
}

// A Put larger than a part is a multipart upload; whatever ends it early
// aborts the upload.
func TestFailedMultipartPutAborts(t *testing.T) {
	s := newStore(t, "")
	const size = 3*testPartSize + 1234
	boom := errors.New("client went away")
	if _, err := s.Put(ctx, "big", &pattern{n: size, failAt: 2*testPartSize + 10, fail: boom}, blob.PutOptions{}); !errors.Is(err, boom) {
		t.Errorf("failing reader: %v", err)
	}
	noUploads(t, s, "a failing reader")

	cctx, cancel := context.WithCancel(ctx)
	// The reader cancels once two parts went up, then stalls the Put's
	// next read, as a client that hangs up mid-upload.
	p := &pattern{n: size, failAt: 2 * testPartSize, fail: context.Canceled, at: cancel}
	if _, err := s.Put(cctx, "big", p, blob.PutOptions{}); err == nil {
		t.Error("Put cancelled mid-upload succeeded")
	}
	cancel()
	noUploads(t, s, "a cancelled Put")

	if _, err := s.Put(ctx, "big", &pattern{n: size - 1}, blob.PutOptions{Size: size}); err == nil {
		t.Error("multipart Put shorter than its Size succeeded")
	}
	noUploads(t, s, "a short Put")
	if _, err := s.Put(ctx, "big", &pattern{n: size + 1}, blob.PutOptions{Size: size}); err == nil {
		t.Error("multipart Put longer than its Size succeeded")
	}
	noUploads(t, s, "a long Put")

	info, err := s.Put(ctx, "big", &pattern{n: size}, blob.PutOptions{Size: size, ContentType: "application/pdf"})
	if err != nil || info.Size != size {
		t.Fatalf("Put: %+v, %v", info, err)
	}
	oi, err := s.Client().StatObject(ctx, bucketOf(t, s), "big", minio.StatObjectOptions{})
	if err != nil || oi.Size != size || oi.ContentType != "application/pdf" {
		t.Errorf("stored object: size %d, type %q, %v", oi.Size, oi.ContentType, err)
	}
}

func bucketOf(t *testing.T, s *s3store.Store) string {
	t.Helper()
	bs, err := s.Client().ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each test has the newest bucket; the names are t-1, t-2, ...
	best, bestN := "", -1
	for _, b := range bs {
		var n int
		if _, err := fmt.Sscanf(b.Name, "t-%d", &n); err == nil && n > bestN {
			best, bestN = b.Name, n
		}
	}
	return best
}

// The server, not the store's Stat, refuses the second create: two
// multipart uploads of one new key race to completion with If-None-Match.
func TestServerHonoursIfNoneMatch(t *testing.T) {
	s := newStore(t, "")
	bucket := bucketOf(t, s)
	core := minio.Core{Client: s.Client()}
	cond := minio.PutObjectOptions{}
	cond.SetMatchETagExcept("*")

	// PutObject onto an existing key.
	if _, err := core.PutObject(ctx, bucket, "k", bytes.NewReader([]byte("one")), 3, "", "", cond); err != nil {
		t.Fatal(err)
	}
	_, err := core.PutObject(ctx, bucket, "k", bytes.NewReader([]byte("two")), 3, "", "", cond)
	if r := minio.ToErrorResponse(err); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("conditional PutObject onto an existing key: %v (status %d)", err, r.StatusCode)
	}

	// Two uploads begun before either completes.
	part := bytes.Repeat([]byte("p"), 1000)
	var ids [2]string
	var parts [2][]minio.CompletePart
	for i := range ids {
		id, err := core.NewMultipartUpload(ctx, bucket, "m", minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := core.PutObjectPart(ctx, bucket, "m", id, 1, bytes.NewReader(append([]byte{byte('0' + i)}, part...)), int64(len(part)+1), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[i], parts[i] = id, []minio.CompletePart{{PartNumber: 1, ETag: p.ETag}}
	}
	if _, err := core.CompleteMultipartUpload(ctx, bucket, "m", ids[0], parts[0], cond); err != nil {
		t.Fatalf("first conditional complete: %v", err)
	}
	_, err = core.CompleteMultipartUpload(ctx, bucket, "m", ids[1], parts[1], cond)
	if r := minio.ToErrorResponse(err); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("second conditional complete: %v (status %d)", err, r.StatusCode)
	}
	core.AbortMultipartUpload(ctx, bucket, "m", ids[1])
	o, err := s.Open(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if b, _ := io.ReadAll(o); len(b) != len(part)+1 || b[0] != '0' {
		t.Errorf("the object is not the first upload's")
	}
}

// Concurrent multipart creates through Put: one wins, the others get
// ErrExists, and none leaves an upload open.
func TestConcurrentMultipartCreates(t *testing.T) {
	s := newStore(t, "")
	const n = 3
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := s.Put(ctx, "once", &pattern{n: testPartSize + 1000 + int64(i)}, blob.PutOptions{IfNoneMatch: true})
			errs <- err
		}()
	}
	won := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, blob.ErrExists):
			t.Errorf("create: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d creates won", won)
	}
	if left := uploads(t, s); len(left) != 0 {
		t.Errorf("open uploads: %q", left)
	}
}

func TestAbortStale(t *testing.T) {
	s := newStore(t, "site")
	bucket := bucketOf(t, s)
	core := minio.Core{Client: s.Client()}
	var ids []string
	for _, k := range []string{"site/a/orphan", "elsewhere/orphan"} {
		id, err := core.NewMultipartUpload(ctx, bucket, k, minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.PutObjectPart(ctx, bucket, k, id, 1, bytes.NewReader([]byte("x")), 1, minio.PutObjectPartOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if n, err := s.AbortStale(ctx, time.Hour); n != 0 || err != nil {
		t.Errorf("AbortStale(1h) of a fresh upload = %d, %v", n, err)
	}
	if got := uploads(t, s); len(got) != 1 || !strings.HasPrefix(got[0], "a/orphan ") {
		t.Errorf("uploads below the prefix: %q", got)
	}
	if n, err := s.AbortStale(ctx, 0); n != 1 || err != nil {
		t.Errorf("AbortStale(0) = %d, %v", n, err)
	}
	if got := uploads(t, s); len(got) != 0 {
		t.Errorf("after AbortStale: %q", got)
	}
	// The upload outside the store's prefix is not the store's.
	res, err := core.ListMultipartUploads(ctx, bucket, "elsewhere/", "", "", "", 10)
	if err != nil || len(res.Uploads) != 1 || res.Uploads[0].UploadID != ids[1] {
		t.Errorf("upload outside the prefix: %+v, %v", res.Uploads, err)
	}
}

// http.ServeContent answers Range requests from an open object.
func TestServeContentRanges(t *testing.T) {
	s := newStore(t, "")
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i * 13)
	}
	if _, err := s.Put(ctx, "r.pdf", bytes.NewReader(data), blob.PutOptions{Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, err := s.Open(r.Context(), "r.pdf")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer o.Close()
		http.ServeContent(w, r, "r.pdf", o.Info().ModTime, o)
	}))
	defer srv.Close()
	for _, c := range []struct {
		rng        string
		status     int
		start, end int
	}{{"", 200, 0, len(data)}, {"bytes=100-199", 206, 100, 200}, {"bytes=-500", 206, len(data) - 500, len(data)}, {"bytes=299000-", 206, 299_000, len(data)}} {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if c.rng != "" {
			req.Header.Set("Range", c.rng)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !bytes.Equal(b, data[c.start:c.end]) {
			t.Errorf("Range %q: %d, %d bytes", c.rng, resp.StatusCode, len(b))
		}
	}
}

// Two stores on one bucket under different prefixes see only their own.
func TestPrefixesAreSeparate(t *testing.T) {
	cfg := testserver.Bucket(t)
	cfg.Prefix = "one"
	a, err := s3store.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Prefix = "two/"
	b, err := s3store.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*s3store.Store{a, b} {
		if _, err := s.Put(ctx, "x/k", bytes.NewReader([]byte("v")), blob.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := blob.DeletePrefix(ctx, a, "x/"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stat(ctx, "x/k"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a's object after DeletePrefix: %v", err)
	}
	var keys []string
	b.Walk(ctx, "", func(i blob.Info) error { keys = append(keys, i.Key); return nil })
	if len(keys) != 1 || keys[0] != "x/k" {
		t.Errorf("b's keys: %q", keys)
	}
}

// Put signs each request with its payload's SHA-256 (not minio-go's
// streaming signature); the server checks it, so a corrupted body fails.
func TestServerChecksPayloadHash(t *testing.T) {
	s := newStore(t, "")
	bucket := bucketOf(t, s)
	core := minio.Core{Client: s.Client()}
	wrong := strings.Repeat("0", 64)
	_, err := core.PutObject(ctx, bucket, "h", bytes.NewReader([]byte("body")), 4, "", wrong, minio.PutObjectOptions{DisableContentSha256: true})
	if err == nil {
		t.Error("PutObject with a wrong payload hash succeeded")
	}
	id, err := core.NewMultipartUpload(ctx, bucket, "h", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer core.AbortMultipartUpload(ctx, bucket, "h", id)
	if _, err := core.PutObjectPart(ctx, bucket, "h", id, 1, bytes.NewReader([]byte("body")), 4, minio.PutObjectPartOptions{Sha256Hex: wrong, DisableContentSha256: true}); err == nil {
		t.Error("UploadPart with a wrong payload hash succeeded")
	}
}

// An open object reads the version it was opened on: after an overwrite
// its reads fail rather than mix the two versions.
func TestOpenPinsVersion(t *testing.T) {
	s := newStore(t, "")
	old := bytes.Repeat([]byte("o"), 100_000)
	if _, err := s.Put(ctx, "v", bytes.NewReader(old), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := s.Put(ctx, "v", bytes.NewReader(bytes.Repeat([]byte("n"), 100_000)), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(o)
	if err == nil && !bytes.Equal(b, old) {
		t.Errorf("read %d bytes of the new version through an object opened on the old one", len(b))
	}
	t.Logf("read after overwrite: %d bytes, %v", len(b), err)
}
