package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// postKeyed uploads parts with an Idempotency-Key (a fresh multipart
// boundary every time, as a retrying client sends).
func postKeyed(e *apitest.Env, key string, parts ...apitest.Part) *apitest.Response {
	e.T.Helper()
	body, ct := apitest.Multipart(parts...)
	req, err := http.NewRequest("POST", e.URL+"/api/reports", body)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return e.Send(req)
}

func reportCount(t *testing.T, e *apitest.Env) int {
	t.Helper()
	var list []report.Report
	e.Get("/api/reports").JSON(t, &list)
	return len(list)
}

// The same key with the same upload (single file or site) answers the
// first answer again and stores nothing more; another upload under the
// key is a ConflictError (409, 500 in spec mode); a malformed key is a
// ValidationError; without a key nothing changes.
func TestIdempotencyKeyUpload(t *testing.T) {
	for _, mode := range []string{"conventional", "spec"} {
		t.Run(mode, func(t *testing.T) {
			e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.ErrorStatus = mode }})
			p := e.CreateProject("idem")
			pid := formField("projectId", fmt.Sprint(p.ID))
			single := []apitest.Part{pid, formField("fileType", "md"), formField("name", "dup"), formField("branch", "main"),
				{Name: "file", FileName: "dup.md", Data: []byte("# dup\n")}}
			first := postKeyed(e, "run-1/dup.md", single...)
			if first.StatusCode != http.StatusCreated {
				t.Fatalf("first: %d %s", first.StatusCode, first.Body)
			}
			again := postKeyed(e, "run-1/dup.md", single...)
			if again.StatusCode != http.StatusCreated || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry: %d %s (replayed %q), want the first answer %s", again.StatusCode, again.Body, again.Header.Get("Idempotent-Replayed"), first.Body)
			}
			if n := reportCount(t, e); n != 1 {
				t.Fatalf("%d reports after a retry, want 1", n)
			}
			conflict := func(r *apitest.Response, what string) {
				t.Helper()
				want := http.StatusConflict
				if mode == "spec" {
					want = http.StatusInternalServerError
				}
				if r.StatusCode != want || !strings.Contains(string(r.Body), `"type":"ConflictError"`) {
					t.Errorf("%s: %d %s, want %d ConflictError", what, r.StatusCode, r.Body, want)
				}
			}
			for what, parts := range map[string][]apitest.Part{
				"another file": {pid, formField("fileType", "md"), formField("name", "dup"), formField("branch", "main"),
					{Name: "file", FileName: "dup.md", Data: []byte("# changed\n")}},
				"another branch": {pid, formField("fileType", "md"), formField("name", "dup"), formField("branch", "dev"),
					{Name: "file", FileName: "dup.md", Data: []byte("# dup\n")}},
				"another file name": {pid, formField("fileType", "md"), formField("name", "dup"), formField("branch", "main"),
					{Name: "file", FileName: "other.md", Data: []byte("# dup\n")}},
			} {
				conflict(postKeyed(e, "run-1/dup.md", parts...), what)
			}
			if n := reportCount(t, e); n != 1 {
				t.Fatalf("%d reports after conflicting retries, want 1", n)
			}
			// The parts in another order are the same request.
			reordered := append([]apitest.Part{single[4], single[3]}, single[:3]...)
			if r := postKeyed(e, "run-1/dup.md", reordered...); string(r.Body) != string(first.Body) {
				t.Errorf("reordered parts: %d %s", r.StatusCode, r.Body)
			}
			// A site of several parts, twice under one key: one report.
			site := []apitest.Part{pid, formField("fileType", "html"),
				{Name: "file", FileName: "cov/index.html", Data: []byte("<p>cov</p>")}, {Name: "file", FileName: "cov/style.css", Data: []byte("p{}")}}
			s1, s2 := postKeyed(e, "run-1/cov", site...), postKeyed(e, "run-1/cov", site...)
			if s1.StatusCode != http.StatusCreated || string(s2.Body) != string(s1.Body) {
				t.Fatalf("site twice: %d %s / %d %s", s1.StatusCode, s1.Body, s2.StatusCode, s2.Body)
			}
			site[3].Data = []byte("p{color:red}")
			conflict(postKeyed(e, "run-1/cov", site...), "a site with one file changed")
			if n := reportCount(t, e); n != 2 {
				t.Fatalf("%d reports, want 2", n)
			}
			// Without a key every upload is a new report; a bad key is refused.
			postKeyed(e, "", single...)
			if n := reportCount(t, e); n != 3 {
				t.Errorf("%d reports after an upload without a key, want 3", n)
			}
			for _, bad := range []string{"with space", strings.Repeat("k", 256), "tab\there"} {
				r := postKeyed(e, bad, single...)
				if !strings.Contains(string(r.Body), `"type":"ValidationError"`) || !strings.Contains(string(r.Body), "Idempotency-Key") {
					t.Errorf("key %q: %d %s", bad, r.StatusCode, r.Body)
				}
			}
			// A failed upload does not keep its key: fixed, the retry runs.
			bad := []apitest.Part{formField("projectId", "999"), formField("fileType", "md"), {Name: "file", FileName: "x.md", Data: []byte("x")}}
			if r := postKeyed(e, "run-1/x.md", bad...); !strings.Contains(string(r.Body), "NotFoundError") {
				t.Fatalf("upload into a missing project: %d %s", r.StatusCode, r.Body)
			}
			if r := postKeyed(e, "run-1/x.md", bad...); !strings.Contains(string(r.Body), "NotFoundError") {
				t.Errorf("the same failed upload again: %d %s, want the same refusal, not a replay or conflict", r.StatusCode, r.Body)
			}
		})
	}
}

// While the first upload under a key is being committed, the same upload
// again is a 409 ConflictError with Retry-After; once the first is done
// the retry gets its answer.
func TestIdempotencyKeyInFlight(t *testing.T) {
	var (
		armed   atomic.Bool
		entered = make(chan struct{})
		release = make(chan struct{})
		once    sync.Once
	)
	e := apitest.Start(t, apitest.Options{
		Config: func(c *config.Config) { c.ErrorStatus = "conventional" },
		Service: func(sc *service.Config) {
			sc.Clock.Now = func() time.Time {
				if armed.Load() {
					once.Do(func() { close(entered); <-release }) // the first commit waits here, its key claimed
				}
				return time.Now()
			}
		},
	})
	p := e.CreateProject("inflight")
	parts := []apitest.Part{formField("projectId", fmt.Sprint(p.ID)), formField("fileType", "md"), {Name: "file", FileName: "slow.md", Data: []byte("# slow\n")}}
	armed.Store(true)
	firstDone := make(chan *apitest.Response, 1)
	go func() { firstDone <- postKeyed(e, "k-slow", parts...) }()
	select {
	case <-entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the first upload never reached its commit")
	}
	r := postKeyed(e, "k-slow", parts...)
	if r.StatusCode != http.StatusConflict || !strings.Contains(string(r.Body), "still in progress") || r.Header.Get("Retry-After") == "" {
		t.Errorf("while in flight: %d %s Retry-After %q", r.StatusCode, r.Body, r.Header.Get("Retry-After"))
	}
	close(release)
	var first *apitest.Response
	select {
	case first = <-firstDone:
	case <-time.After(60 * time.Second):
		t.Fatal("the first upload did not finish")
	}
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("first: %d %s", first.StatusCode, first.Body)
	}
	if again := postKeyed(e, "k-slow", parts...); string(again.Body) != string(first.Body) {
		t.Errorf("after it finished: %d %s, want %s", again.StatusCode, again.Body, first.Body)
	}
	if n := reportCount(t, e); n != 1 {
		t.Errorf("%d reports, want 1", n)
	}
}
