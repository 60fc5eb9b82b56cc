package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// fastOpts keeps retry waits tiny so the tests stay quick; behaviour is the same.
func fastOpts(server string) Options {
	return Options{Server: server, Retries: 3, RetryWait: time.Millisecond, RetryMaxWait: 4 * time.Millisecond, Timeout: 30 * time.Second}
}

func writeAPIError(w http.ResponseWriter, kind report.Kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError) // the spec's status for every error
	json.NewEncoder(w).Encode(map[string]string{"error": string(kind) + ": " + msg, "type": string(kind)})
}

// TestUploadRetryReopensFile: the server fails the first two uploads after
// reading the whole body, then accepts; every attempt must carry the full file.
func TestUploadRetryReopensFile(t *testing.T) {
	content := bytes.Repeat([]byte("<p>report</p>\n"), 50000) // ~700 KB, larger than any pipe buffer
	path := filepath.Join(t.TempDir(), "r.html")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := attempts.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/api/reports" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		f, h, err := r.FormFile("file")
		if err != nil {
			t.Errorf("attempt %d: no file part: %v", n, err)
			writeAPIError(w, report.Validation, "no file")
			return
		}
		got, _ := io.ReadAll(f)
		if !bytes.Equal(got, content) {
			t.Errorf("attempt %d: file part has %d bytes, want %d", n, len(got), len(content))
		}
		if h.Filename != "r.html" || r.FormValue("projectId") != "7" || r.FormValue("fileType") != "html" {
			t.Errorf("attempt %d: fields %q %q %q", n, h.Filename, r.FormValue("projectId"), r.FormValue("fileType"))
		}
		if n < 3 {
			writeAPIError(w, report.Storage, "disk busy")
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(report.Report{ID: 42, ProjectID: 7, FileName: "r.html", FileType: report.HTML})
	}))
	defer srv.Close()

	c, err := New(fastOpts(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	var opens int
	up := report.ReportUpload{ProjectID: 7, FileType: report.HTML, File: report.Upload{
		FileName: path,
		Open:     func() (io.ReadCloser, error) { opens++; return os.Open(path) },
	}}
	got, err := c.UploadReport(t.Context(), up)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 42 || attempts.Load() != 3 || opens != 3 {
		t.Fatalf("id=%d attempts=%d opens=%d, want 42 3 3", got.ID, attempts.Load(), opens)
	}
}

// TestUploadWithoutOpenIsNotResent: a Body-only upload cannot be re-read, so
// the client must stop rather than send an empty body.
func TestUploadWithoutOpenIsNotResent(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		io.Copy(io.Discard, r.Body)
		writeAPIError(w, report.Storage, "disk busy")
	}))
	defer srv.Close()
	c, _ := New(fastOpts(srv.URL))
	_, err := c.UploadReport(t.Context(), report.ReportUpload{ProjectID: 1, FileType: report.MD,
		File: report.Upload{FileName: "a.md", Body: strings.NewReader("# hi")}})
	if err == nil || !strings.Contains(err.Error(), "cannot retry") || attempts.Load() != 1 {
		t.Fatalf("err=%v attempts=%d", err, attempts.Load())
	}
}

func TestErrorKindsAndRetries(t *testing.T) {
	tests := []struct {
		kind     report.Kind
		attempts int32
	}{
		{report.Validation, 1},
		{report.NotFound, 1},
		{report.PayloadTooLarge, 1},
		{report.Conversion, 1},
		{report.Unauthorized, 1},
		{report.Storage, 4},
		{report.Unavailable, 4},
		{report.Internal, 4},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			var attempts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				attempts.Add(1)
				writeAPIError(w, tt.kind, "project 9 is gone")
			}))
			defer srv.Close()
			c, _ := New(fastOpts(srv.URL))
			_, err := c.GetProject(t.Context(), 9)
			var re *report.Error
			want := "project 9 is gone"
			if tt.kind == report.Unauthorized { // told how to give a token
				want += " - no token was sent, and this server now requires one: pass it with --token, REPORTCTL_TOKEN or token: in reportctl's config file; " +
					"an administrator makes one with reportd token create"
			}
			if !errors.As(err, &re) || re.Kind != tt.kind || re.Message != want {
				t.Fatalf("err = %#v", err)
			}
			if attempts.Load() != tt.attempts {
				t.Fatalf("attempts = %d, want %d", attempts.Load(), tt.attempts)
			}
		})
	}
}

func TestStatusFallbackForForeignBodies(t *testing.T) {
	tests := []struct {
		status int
		kind   report.Kind
	}{
		{http.StatusUnauthorized, report.Unauthorized},
		{http.StatusNotFound, report.NotFound},
		{http.StatusBadRequest, report.Validation},
		{http.StatusBadGateway, report.Unavailable},
	}
	for _, tt := range tests {
		got := decodeError(tt.status, []byte("<html>proxy page</html>"))
		if got.Kind != tt.kind || !strings.Contains(got.Message, "HTTP") {
			t.Errorf("%d: %v", tt.status, got)
		}
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	c, _ := New(fastOpts("http://" + addr))
	_, err = c.Ping(t.Context())
	var u *UnreachableError
	if !errors.As(err, &u) || u.Attempts != 4 {
		t.Fatalf("err = %v", err)
	}
}

func TestRecoversAfterOutage(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) < 3 {
			// Drop the connection without an answer: a transport error.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		json.NewEncoder(w).Encode(report.Ping{Version: "v1", Timestamp: time.Now().UTC()})
	}))
	defer srv.Close()
	c, _ := New(fastOpts(srv.URL))
	p, err := c.Ping(t.Context())
	if err != nil || p.Version != "v1" {
		t.Fatalf("ping = %+v, %v", p, err)
	}
}

func TestTokenAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
			t.Errorf("Authorization = %q", got)
		}
		if r.URL.Path == "/api/projects" {
			w.Write([]byte("[]"))
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	o := fastOpts(srv.URL)
	o.Token = "s3cret"
	c, _ := New(o)
	ps, err := c.ListProjects(t.Context())
	if err != nil || ps == nil || len(ps) != 0 {
		t.Fatalf("list = %#v, %v", ps, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := c.GetReport(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestStreamFileName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="r_sum_.html"; filename*=UTF-8''r%C3%A9sum%C3%A9.html`)
		w.Write([]byte("<h1>hi</h1>"))
	}))
	defer srv.Close()
	c, _ := New(fastOpts(srv.URL))
	s, err := c.Download(t.Context(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, _ := io.ReadAll(s)
	if s.FileName != "résumé.html" || string(b) != "<h1>hi</h1>" || s.Size != int64(len(b)) {
		t.Fatalf("name=%q body=%q size=%d", s.FileName, b, s.Size)
	}
}

func TestDispositionFileName(t *testing.T) {
	tests := map[string]string{
		`attachment; filename="a.pdf"`:            "a.pdf",
		`attachment; filename="../../etc/passwd"`: "passwd",
		`attachment; filename="..\\..\\x.md"`:     "x.md",
		`attachment; filename=".."`:               "",
		`inline`:                                  "",
		``:                                        "",
		`attachment; filename*=UTF-8''%E6%8A%A5%E5%91%8A.md`: "报告.md",
	}
	for h, want := range tests {
		if got := DispositionFileName(h); got != want {
			t.Errorf("%q: got %q, want %q", h, got, want)
		}
	}
}

func TestSiteURL(t *testing.T) {
	tests := map[string]string{
		"":                           DefaultServer,
		"http://h:1/":                "http://h:1",
		"http://h:1/api":             "http://h:1",
		"https://h/reports/api/":     "https://h/reports",
		"http://127.0.0.1:8080/base": "http://127.0.0.1:8080/base",
	}
	for in, want := range tests {
		if got, err := SiteURL(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://h", "127.0.0.1:8080", "http://"} {
		if _, err := SiteURL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// countingReader is an endless-looking file that counts what was read.
type countingReader struct {
	n, limit int64
	read     *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > c.limit-c.n {
		k = c.limit - c.n
	}
	for i := range p[:k] {
		p[i] = 'a'
	}
	c.n += k
	c.read.Add(k)
	return int(k), nil
}

func (c *countingReader) Close() error { return nil }

// TestUploadIsStreamed: when the server has the first megabyte, the client
// must not have read the whole file yet: uploads are never held in memory.
func TestUploadIsStreamed(t *testing.T) {
	const size = 64 << 20
	var read atomic.Int64
	var readWhenFirstMB int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.CopyN(io.Discard, r.Body, 1<<20); err != nil {
			t.Errorf("first MB: %v", err)
		}
		readWhenFirstMB = read.Load()
		n, _ := io.Copy(io.Discard, r.Body)
		if n+1<<20 < size {
			t.Errorf("body has %d bytes", n+1<<20)
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":1}`))
	}))
	defer srv.Close()
	c, _ := New(fastOpts(srv.URL))
	_, err := c.UploadReport(t.Context(), report.ReportUpload{ProjectID: 1, FileType: report.MD, File: report.Upload{
		FileName: "big.md",
		Open:     func() (io.ReadCloser, error) { return &countingReader{limit: size, read: &read}, nil },
	}})
	if err != nil {
		t.Fatal(err)
	}
	if readWhenFirstMB >= size/2 {
		t.Fatalf("the client had read %d of %d bytes before the server got 1 MiB: the body was buffered", readWhenFirstMB, size)
	}
}

// TestTimeouts: the overall timeout ends a hung attempt (and, after the
// retries, reports the server unreachable), but a stream is bounded only
// until its headers arrive, so a slow large download is not cut off.
func TestTimeouts(t *testing.T) {
	var hung atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/reports/1/download" {
			w.Header().Set("Content-Disposition", `attachment; filename="slow.md"`)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			time.Sleep(1500 * time.Millisecond) // longer than Timeout, after the headers
			w.Write([]byte("# late\n"))
			return
		}
		hung.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	o := fastOpts(srv.URL)
	o.Timeout, o.Retries = time.Second, 1

	c, _ := New(o)
	_, err := c.ListProjects(t.Context())
	var u *UnreachableError
	if !errors.As(err, &u) || hung.Load() != 2 {
		t.Fatalf("hung server: err=%v attempts=%d", err, hung.Load())
	}

	s, err := c.Download(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "# late\n" || s.FileName != "slow.md" {
		t.Fatalf("slow stream: %q %v", b, err)
	}
}
