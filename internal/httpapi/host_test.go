package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// hostGet sends GET path to e with the given Host header.
func hostGet(e *apitest.Env, method, path, host string) *apitest.Response {
	e.T.Helper()
	req, err := http.NewRequest(method, e.URL+path, nil)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Host = host
	return e.Send(req)
}

func TestHostAllowList(t *testing.T) {
	dashboard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("dashboard")) })
	e := apitest.Start(t, apitest.Options{
		Config: func(c *config.Config) {
			c.AllowedHosts = []string{"reports.example.org", "*.corp.example", "[2001:db8::7]:8443", "192.0.2.10"}
		},
		HTTP: func(h *httpapi.Config) { h.Dashboard = dashboard },
	})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.html", report.HTML, []byte("<p>hi</p>"))
	paths := []string{"/api/reports/ping", "/api/projects", "/api/reports/1", "/uploads" + rep.FilePath[len("/uploads"):], "/", "/api/openapi.json"}
	allowed := []string{
		"localhost", "localhost:8080", "LOCALHOST.", "app.localhost:1", "127.0.0.1", "127.0.0.1:80", "127.9.8.7:1234",
		"[::1]:8080", "[::1]", "[::ffff:127.0.0.1]:80",
		"reports.example.org", "Reports.Example.Org:443", "a.corp.example", "b.a.corp.example:80", "[2001:db8::7]", "192.0.2.10:9",
	}
	refused := []string{
		"evil.example:8080", "evil.example", "reports.example.org.evil.example", "corp.example", "xcorp.example",
		"localhost.evil.example", "127.0.0.1.nip.io", "192.0.2.11", "[2001:db8::8]", "0.0.0.0", "10.0.0.1:8080",
	}
	for _, path := range paths {
		for _, h := range allowed {
			if r := hostGet(e, "GET", path, h); r.StatusCode != 200 {
				t.Errorf("Host %s %s: %d %s", h, path, r.StatusCode, r.Body)
			}
		}
		for _, h := range refused {
			r := hostGet(e, "GET", path, h)
			wantError(t, r, report.Validation)
		}
	}
	// A refused Host is refused for every method, preflight included, and changes nothing.
	for _, m := range []string{"DELETE", "OPTIONS", "POST", "PUT"} {
		wantError(t, hostGet(e, m, "/api/projects/1", "evil.example:8080"), report.Validation)
	}
	if r := e.Get("/api/projects/1"); r.StatusCode != 200 {
		t.Fatalf("project gone after refused requests: %d", r.StatusCode)
	}
}

func TestHostRefusalStatusConventional(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.ErrorStatus = "conventional" }})
	r := hostGet(e, "GET", "/api/reports/ping", "evil.example:8080")
	var body httpapi.ErrorBody
	r.JSON(t, &body)
	if r.StatusCode != http.StatusMisdirectedRequest || body.Type != string(report.Validation) {
		t.Fatalf("%d %s", r.StatusCode, r.Body)
	}
	if r := hostGet(e, "GET", "/api/reports/ping", "localhost"); r.StatusCode != 200 {
		t.Fatalf("localhost: %d", r.StatusCode)
	}
}

func TestHostAllowAny(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.AllowedHosts = []string{"*"} }})
	if r := hostGet(e, "GET", "/api/reports/ping", "anything.example"); r.StatusCode != 200 {
		t.Fatalf("%d %s", r.StatusCode, r.Body)
	}
}

// HTTP/1.0 allows a request without Host; it is refused like an unknown one.
func TestHostMissingRefused(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /api/reports/ping HTTP/1.0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body httpapi.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 500 || body.Type != string(report.Validation) {
		t.Fatalf("%s %+v %v", resp.Status, body, err)
	}
}

// A report's own origin ({id}.localhost) is the content origin's, not the
// API's: the API, the dashboard and the admin endpoints refuse it on the
// API port, even with allowed_hosts "*"; other *.localhost names still work.
func TestReportHostRefusedOnAPI(t *testing.T) {
	dashboard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("dashboard")) })
	e := apitest.Start(t, apitest.Options{
		Config: func(c *config.Config) { c.ErrorStatus, c.AllowedHosts = "conventional", []string{"*"} },
		HTTP:   func(h *httpapi.Config) { h.Dashboard = dashboard },
	})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(e.URL, "http://"))
	for _, host := range []string{"7.localhost:" + port, "7.localhost", "123.LOCALHOST.:" + port} {
		for _, path := range []string{"/", "/api/reports/ping", "/api/projects", "/admin/backup"} {
			r := hostGet(e, "GET", path, host)
			var body httpapi.ErrorBody
			r.JSON(t, &body)
			if r.StatusCode != http.StatusMisdirectedRequest || body.Type != string(report.Validation) || !strings.Contains(body.Error, "content origin") {
				t.Errorf("Host %s %s: %d %s", host, path, r.StatusCode, r.Body)
			}
		}
	}
	for _, host := range []string{"localhost:" + port, "app.localhost:" + port, "07.localhost:" + port} {
		if r := hostGet(e, "GET", "/", host); r.StatusCode != 200 || string(r.Body) != "dashboard" {
			t.Errorf("Host %s: %d %s", host, r.StatusCode, r.Body)
		}
	}
}
