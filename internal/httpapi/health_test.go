package httpapi_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// TestProbesOpenToAnyHost: /livez and /readyz need no token even with
// auth.reads, answer whatever Host a probe sends, and list the store.
func TestProbesOpenToAnyHost(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.Auth.Token, c.Auth.Reads = "a-long-enough-token-for-this-test-0123456789", true
	}})
	for _, host := range []string{"127.0.0.1", "10.1.2.3:8080", "evil.example"} {
		r := hostGet(e, "GET", "/livez", host)
		if r.StatusCode != 200 || !strings.Contains(string(r.Body), `"status":"live"`) || !strings.Contains(string(r.Body), `"version":"test"`) {
			t.Errorf("livez via Host %s: %d %s", host, r.StatusCode, r.Body)
		}
		r = hostGet(e, "GET", "/readyz", host)
		var body struct {
			Status       string
			Dependencies []httpapi.Dependency
		}
		r.JSON(t, &body)
		if r.StatusCode != 200 || body.Status != "ready" || len(body.Dependencies) != 1 ||
			body.Dependencies[0].Name != "store" || body.Dependencies[0].Kind != "bbolt" || !body.Dependencies[0].Up {
			t.Errorf("readyz via Host %s: %d %s", host, r.StatusCode, r.Body)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("readyz Cache-Control %q", r.Header.Get("Cache-Control"))
		}
	}
	// The allow-list still holds everywhere else, and reads still need the token.
	wantError(t, hostGet(e, "GET", "/api/reports/ping", "evil.example"), report.Validation)
	wantError(t, e.Get("/api/projects"), report.Unauthorized)
	// Other methods are refused like on any route.
	if r := e.Do("POST", "/readyz", nil, ""); r.StatusCode != 500 {
		t.Errorf("POST /readyz: %d %s", r.StatusCode, r.Body)
	}
}

// TestOutageNamedUnavailable: a StorageError whose cause is an outage of
// the database or bucket answers ServiceUnavailableError, 503 with
// Retry-After in the conventional mode, 500 in the spec's.
func TestOutageNamedUnavailable(t *testing.T) {
	outage := report.Wrap(report.Unavailable, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"),
		"the metadata store (PostgreSQL) is unavailable; try again shortly")
	wrapped := report.Wrap(report.Storage, outage, "cannot read the report's file")
	broken := report.Wrap(report.Storage, errors.New("EIO"), "cannot read the report's file")
	for _, tc := range []struct {
		mode       httpapi.StatusMode
		err        error
		status     int
		kind       report.Kind
		retryAfter bool
	}{
		{httpapi.StatusConventional, outage, 503, report.Unavailable, true},
		{httpapi.StatusConventional, wrapped, 503, report.Unavailable, true},
		{httpapi.StatusSpec, wrapped, 500, report.Unavailable, false},
		{httpapi.StatusConventional, broken, 500, report.Storage, false},
	} {
		s := httpapi.New(httpapi.Config{ErrorStatus: tc.mode}, nil, nil)
		rec := httptest.NewRecorder()
		s.WriteError(rec, httptest.NewRequest("GET", "/api/reports/1", nil), tc.err)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), `"type":"`+string(tc.kind)+`"`) ||
			(rec.Header().Get("Retry-After") != "") != tc.retryAfter {
			t.Errorf("%s %v: %d %s Retry-After %q", tc.mode, tc.err, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
		if tc.kind == report.Unavailable && !strings.Contains(rec.Body.String(), "PostgreSQL) is unavailable") {
			t.Errorf("the outage's own message is lost: %s", rec.Body)
		}
		if strings.Contains(rec.Body.String(), "connection refused") {
			t.Errorf("internal detail sent: %s", rec.Body)
		}
	}
}
