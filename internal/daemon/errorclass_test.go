package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer the server's goroutines may log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestErrorClass: in the spec's status mode a typo and a broken disk are
// both 500; the request log line names the error type and the metrics
// tell a client error from a server error.
func TestErrorClass(t *testing.T) {
	var logs syncBuffer
	c := testConfig(t, t.TempDir())
	s, _ := startServerWith(t, &Server{Config: c, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	base := "http://" + s.Addr()
	proj := createProject(t, base, "alerts")
	st, rep, e, err := upload(httpClient, base, proj.ID, "md", "a.md", markdown("a", 100))
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload: %d %v %v", st, e, err)
	}

	get := func(path string) (int, apiError) {
		t.Helper()
		resp, err := httpClient.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body apiError
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	// A client's mistake: no such report.
	if st, body := get("/api/reports/999999"); st != http.StatusInternalServerError || body.Type != "NotFoundError" {
		t.Fatalf("missing report: %d %+v", st, body)
	}
	// The daemon's trouble: the stored file is gone from under it.
	if err := os.Remove(filepath.Join(c.DataDir, filepath.FromSlash(strings.TrimPrefix(rep.FilePath, "/")))); err != nil {
		t.Fatal(err)
	}
	preview := fmt.Sprintf("/api/reports/%d/preview", rep.ID)
	if st, body := get(preview); st != http.StatusInternalServerError || body.Type != "StorageError" {
		t.Fatalf("preview of a lost file: %d %+v", st, body)
	}

	// Paths no route takes share one label, whatever their prefix.
	get("/api/nope")
	get("/api/projects/1/nope")

	text := string(getBody(t, base+"/metrics"))
	for _, want := range []string{
		`reportd_http_requests_total{class="client_error",route="unmatched",status="500"} 2`,
		`reportd_http_requests_total{class="client_error",route="GET /api/reports/{id}",status="500"} 1`,
		`reportd_http_requests_total{class="server_error",route="GET /api/reports/{id}/preview",status="500"} 1`,
		`reportd_http_requests_total{class="ok",route="POST /api/reports",status="201"} 1`,
		`reportd_http_errors_total{route="GET /api/reports/{id}",type="NotFoundError"} 1`,
		`reportd_http_errors_total{route="GET /api/reports/{id}/preview",type="StorageError"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// One request line per request, with the type when it failed.
	lines := map[string]map[string]any{}
	for l := range strings.SplitSeq(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			lines[m["path"].(string)] = m
		}
	}
	for path, want := range map[string][2]string{
		"/api/reports/999999": {"NotFoundError", "client_error"},
		preview:               {"StorageError", "server_error"},
		"/api/projects":       {"", "ok"},
	} {
		l := lines[path]
		if l == nil {
			t.Errorf("no request log line for %s", path)
			continue
		}
		typ, _ := l["type"].(string)
		if typ != want[0] || l["class"] != want[1] {
			t.Errorf("log line for %s: type %q class %v, want %q %q", path, typ, l["class"], want[0], want[1])
		}
	}
}
