package apitest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
)

// The in-process stack is the daemon's own wiring: the metrics observer,
// the admin routes and the configuration mapping all run.
func TestStartWiresLikeTheDaemon(t *testing.T) {
	e := Start(t, Options{Config: func(c *config.Config) { c.ErrorStatus, c.Auth.Token = "conventional", "tok" }})
	if r := e.Get("/api/reports/ping"); r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `"test"`) {
		t.Fatalf("ping: %d %s", r.StatusCode, r.Body)
	}
	// error_status: conventional maps a missing report to 404 (spec: 500).
	if r := e.Get("/api/reports/999"); r.StatusCode != http.StatusNotFound {
		t.Errorf("missing report under error_status conventional: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Get("/metrics"); r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `reportd_http_requests_total{class="ok",route="GET /api/reports/ping",status="200"} 1`) {
		t.Errorf("metrics did not observe the ping: %d\n%s", r.StatusCode, r.Body)
	}
	if r := e.Get("/admin/backup"); r.StatusCode != http.StatusUnauthorized || !strings.Contains(string(r.Body), `"type":"UnauthorizedError"`) {
		t.Errorf("admin without credentials: %d %s", r.StatusCode, r.Body)
	}
	req, _ := http.NewRequest("GET", e.URL+"/admin/backup", nil)
	req.Header.Set("Authorization", "Bearer tok")
	if r := e.Send(req); r.StatusCode != http.StatusOK || len(r.Body) == 0 {
		t.Errorf("admin backup with the token: %d %.200s", r.StatusCode, r.Body)
	}
}

// Hooks reach what no key does; a reopened data directory keeps its data.
func TestStartHooksAndReopen(t *testing.T) {
	e := Start(t, Options{HTTP: func(h *httpapi.Config) { h.MaxJSONBytes = 16 }})
	if r := e.PostJSON("POST", "/api/projects", map[string]any{"name": strings.Repeat("x", 64)}); r.StatusCode == http.StatusCreated {
		t.Fatalf("a 64-byte name passed a 16-byte JSON limit: %s", r.Body)
	}
	e2 := Start(t, Options{})
	p := e2.CreateProject("kept")
	e2.Close()
	e3 := Start(t, Options{DataDir: e2.DataDir})
	if r := e3.Get("/api/projects/" + jsonInt(p.ID)); r.StatusCode != http.StatusOK {
		t.Fatalf("after reopen: %d %s", r.StatusCode, r.Body)
	}
}
