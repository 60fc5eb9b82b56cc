// Package apitest runs reportd's server (daemon.Server: bbolt store, file
// store, service, HTTP handler, admin routes, metrics) in the test process
// on 127.0.0.1 with a temp data directory, and gives tests small helpers to
// call it. Shared by every package's API tests.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// Options tune the stack; the zero value is reportd's defaults with a temp
// data directory, no PDF engines and service version "test".
type Options struct {
	// Config edits the daemon's configuration, as reportd.yaml would.
	Config func(*config.Config)
	// Service and HTTP edit what the daemon maps from the configuration,
	// for what no key reaches (daemon.Hooks).
	Service func(*service.Config)
	HTTP    func(*httpapi.Config)
	// Engines runs Chromium and LibreOffice for /pdf, started on the first
	// conversion; without, PDFs pass through and other types fail.
	Engines bool
	DataDir string // reuse a data directory (e.g. to reopen); default t.TempDir()
	// Log receives the daemon's log (request lines included); default none.
	Log *slog.Logger
}

// Env is a running stack.
type Env struct {
	T       testing.TB
	URL     string // site URL, e.g. http://127.0.0.1:34567
	DataDir string
	Svc     *service.Service
	Store   *boltstore.Store
	Server  *daemon.Server
	stop    func()
}

// Start runs daemon.Server in this process, wired exactly as `reportd
// serve` wires it (admin routes, metrics, dashboard, configuration
// mapping), on 127.0.0.1:0, and stops it at the end of the test.
func Start(t testing.TB, o Options) *Env {
	t.Helper()
	dir := o.DataDir
	if dir == "" {
		dir = t.TempDir()
	}
	c := config.DefaultConfig()
	c.DataDir, c.Addr = dir, "127.0.0.1:0"
	c.Content.Addr = "127.0.0.1:0"
	c.Convert.WarmOnStart = false
	if o.Config != nil {
		o.Config(&c)
	}
	s := &daemon.Server{Config: c, Log: o.Log, Hooks: daemon.Hooks{
		Service: func(sc *service.Config) {
			sc.Version = "test"
			if o.Service != nil {
				o.Service(sc)
			}
		},
		HTTP:      o.HTTP,
		NoEngines: !o.Engines,
	}}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Open(ctx); err != nil {
		cancel()
		s.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	e := &Env{T: t, URL: "http://" + s.Addr(), DataDir: s.Config.DataDir, Svc: s.Service(), Store: s.Store(), Server: s}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("apitest: Run: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("apitest: Close: %v", err)
			}
		})
	}
	t.Cleanup(e.Close)
	return e
}

// Close stops the server and closes the stores (idempotent).
func (e *Env) Close() { e.stop() }

// Response is a finished request, body read.
type Response struct {
	*http.Response
	Body []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v\n%s", r.Request.URL, err, r.Body)
	}
}

// Do sends a request with an optional body and content type.
func (e *Env) Do(method, path string, body io.Reader, contentType string) *Response {
	e.T.Helper()
	req, err := http.NewRequest(method, e.URL+path, body)
	if err != nil {
		e.T.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return e.Send(req)
}

// Send sends a prepared request.
func (e *Env) Send(req *http.Request) *Response {
	e.T.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	return &Response{Response: resp, Body: b}
}

// Get is Do("GET", path, nil, "").
func (e *Env) Get(path string) *Response { return e.Do("GET", path, nil, "") }

// PostJSON sends v as JSON.
func (e *Env) PostJSON(method, path string, v any) *Response {
	e.T.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.T.Fatal(err)
	}
	return e.Do(method, path, bytes.NewReader(b), "application/json")
}

// Part is one multipart part: a field when FileName is empty, else a file.
type Part struct {
	Name, FileName string
	Data           []byte
}

// Multipart builds a multipart body from parts, in order.
func Multipart(parts ...Part) (io.Reader, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		var w io.Writer
		if p.FileName != "" {
			w, _ = mw.CreateFormFile(p.Name, p.FileName)
		} else {
			w, _ = mw.CreateFormField(p.Name)
		}
		w.Write(p.Data)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// CreateProject creates a project by JSON and returns it.
func (e *Env) CreateProject(name string) report.Project {
	e.T.Helper()
	r := e.PostJSON("POST", "/api/projects", map[string]any{"name": name})
	if r.StatusCode != http.StatusCreated {
		e.T.Fatalf("create project: %d %s", r.StatusCode, r.Body)
	}
	var p report.Project
	r.JSON(e.T, &p)
	return p
}

// Upload uploads data as fileName with type t into project and returns the response.
func (e *Env) Upload(project int64, fileName string, t report.FileType, data []byte) *Response {
	e.T.Helper()
	body, ct := Multipart(
		Part{Name: "projectId", Data: []byte(jsonInt(project))},
		Part{Name: "fileType", Data: []byte(t)},
		Part{Name: "file", FileName: fileName, Data: data},
	)
	return e.Do("POST", "/api/reports", body, ct)
}

// MustUpload is Upload that fails the test unless it got 201.
func (e *Env) MustUpload(project int64, fileName string, t report.FileType, data []byte) report.Report {
	e.T.Helper()
	r := e.Upload(project, fileName, t, data)
	if r.StatusCode != http.StatusCreated {
		e.T.Fatalf("upload %s: %d %s", fileName, r.StatusCode, r.Body)
	}
	var rep report.Report
	r.JSON(e.T, &rep)
	return rep
}

// Tree lists every file below the data directory's uploads/ and tmp/, with
// sizes, to compare before and after a request.
func (e *Env) Tree() map[string]int64 {
	e.T.Helper()
	WaitJournal(e.T, e.DataDir)
	out := map[string]int64{}
	for _, sub := range []string{"uploads", "tmp"} {
		filepath.Walk(filepath.Join(e.DataDir, sub), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				rel, _ := filepath.Rel(e.DataDir, p)
				out[rel] = fi.Size()
			}
			return nil
		})
	}
	return out
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
