package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
)

// Unsafe methods sent by a browser for another site are refused, with or
// without a bearer token; reads, preflights and API clients (no Origin,
// no Sec-Fetch-Site) are not; the API's own origin and public_url's are
// allowed.
func TestCrossOriginChangesRefused(t *testing.T) {
	const token = "cross-origin-test-token-0123456789"
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.ErrorStatus, c.Auth.Token, c.PublicURL = "conventional", token, "https://reports.example.com"
	}})
	own := strings.TrimSuffix(e.URL, "/")
	host := strings.TrimPrefix(own, "http://")
	send := func(method, path string, hdr map[string]string, bearer bool) *apitest.Response {
		t.Helper()
		var body *strings.Reader
		if method == "POST" || method == "PUT" || method == "PATCH" {
			body = strings.NewReader(`{"name":"x"}`)
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, e.URL+path, body)
		req.Header.Set("Content-Type", "application/json")
		if bearer {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			req.Header[k] = []string{v}
		}
		return e.Send(req)
	}
	var p report.Project
	send("POST", "/api/projects", nil, true).JSON(t, &p)
	refused := []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://7.localhost:8081"},
		{"Origin": "http://7.localhost:8081"},
		{"Origin": "https://evil.example"},
		{"Origin": "null"},
		{"Origin": ""},
		{"Origin": "http://" + host + ".evil.example"},
		{"Origin": "http://reports.example.com"}, // public_url is https
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		for _, h := range refused {
			for _, bearer := range []bool{false, true} {
				r := send(m, "/api/projects/"+fmt.Sprint(p.ID), h, bearer)
				if r.StatusCode != http.StatusForbidden || !strings.Contains(string(r.Body), "ForbiddenError: "+m) ||
					strings.Contains(r.Header.Get("WWW-Authenticate"), "insufficient_scope") {
					t.Errorf("%s %v bearer=%v: %d %s %q", m, h, bearer, r.StatusCode, r.Body, r.Header.Get("WWW-Authenticate"))
				}
			}
		}
	}
	if r := e.Get("/api/projects/" + fmt.Sprint(p.ID)); r.StatusCode != 200 {
		t.Fatalf("the project is gone: %d %s", r.StatusCode, r.Body)
	}
	// Reads and preflights from anywhere are answered as before.
	if r := send("GET", "/api/projects", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, false); r.StatusCode != 200 {
		t.Errorf("cross-site GET: %d %s", r.StatusCode, r.Body)
	}
	pre := send("OPTIONS", "/api/projects/"+fmt.Sprint(p.ID), map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example",
		"Access-Control-Request-Method": "DELETE"}, false)
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight: %d %q", pre.StatusCode, pre.Header.Get("Access-Control-Allow-Origin"))
	}
	// Allowed: no browser headers (API clients), the API's own origin
	// (the dashboard), public_url's origin, same-origin and user-typed fetches.
	allowed := []map[string]string{
		nil,
		{"Origin": own},
		{"Origin": "https://reports.example.com"},
		{"Origin": "https://reports.example.com:443"},
		{"Sec-Fetch-Site": "same-origin", "Origin": own},
		{"Sec-Fetch-Site": "none"},
	}
	for _, h := range allowed {
		r := send("PUT", "/api/projects/"+fmt.Sprint(p.ID), h, true) // reaches the handler: JSON is not its format
		if r.StatusCode == http.StatusForbidden || !strings.Contains(string(r.Body), "multipart/form-data") {
			t.Errorf("PUT %v: %d %s", h, r.StatusCode, r.Body)
		}
	}
	// Without the token an allowed origin gets the usual 401: the origin
	// check opens nothing.
	if r := send("DELETE", "/api/projects/"+fmt.Sprint(p.ID), map[string]string{"Origin": own}, false); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("own-origin DELETE without a token: %d %s", r.StatusCode, r.Body)
	}
	wantKind := func(r *apitest.Response, k report.Kind) {
		t.Helper()
		if !strings.Contains(string(r.Body), string(k)) {
			t.Errorf("%d %s, want %s", r.StatusCode, r.Body, k)
		}
	}
	wantKind(send("POST", "/api/reports", map[string]string{"Origin": "https://evil.example"}, true), report.Forbidden)
}
