package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

const legacyToken = "legacy-s3cret-token"

// tokenEnv is a daemon with auth.token, auth.reads, two projects (1: A,
// 2: B) with one Markdown report each (1 in A, 2 in B), and one scoped
// token of each kind the matrix needs.
type tokenEnv struct {
	*apitest.Env
	auth map[string]string // principal name -> Authorization header ("" for none)
}

func startTokenEnv(t *testing.T, mode httpapi.StatusMode, reads bool) *tokenEnv {
	t.Helper()
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.Auth.Token, c.Auth.Reads, c.ErrorStatus, c.Dashboard, c.Metrics.Enabled = legacyToken, reads, string(mode), true, true
	}})
	te := &tokenEnv{Env: e, auth: map[string]string{"none": "", "legacy": "Bearer " + legacyToken}}
	for _, name := range []string{"A", "B"} {
		te.mustOK(te.call("legacy", "POST", "/api/projects", strings.NewReader(`{"name":"`+name+`"}`), "application/json"))
	}
	for _, p := range []string{"1", "2"} {
		te.mustOK(te.upload("legacy", p, true))
	}
	set := e.Server.Tokens()
	mk := func(name string, sp tokens.Spec) string {
		_, secret, err := set.Create(sp)
		if err != nil {
			t.Fatal(err)
		}
		te.auth[name] = "Bearer " + secret
		return secret
	}
	mk("read", tokens.Spec{Scope: tokens.Read})
	mk("readA", tokens.Spec{Scope: tokens.Read, Projects: []int64{1}})
	mk("readB", tokens.Spec{Scope: tokens.Read, Projects: []int64{2}})
	mk("uploadA", tokens.Spec{Scope: tokens.Upload, Projects: []int64{1}})
	mk("uploadB", tokens.Spec{Scope: tokens.Upload, Projects: []int64{2}})
	mk("admin", tokens.Spec{Scope: tokens.Admin})
	set.SetClock(func() time.Time { return time.Now().Add(-2 * time.Hour) })
	mk("expired", tokens.Spec{Scope: tokens.Admin, Expires: time.Hour})
	set.SetClock(time.Now)
	revoked, _, _ := set.Create(tokens.Spec{Scope: tokens.Admin})
	set.Revoke(revoked.ID)
	te.auth["revoked"] = "Bearer rpt_" + strings.TrimPrefix(revoked.ID, "tok_") + "_x" // wrong secret: still "not valid"
	// A revoked token with its real secret:
	_, sec, _ := set.Create(tokens.Spec{Scope: tokens.Admin})
	id, _, _ := strings.Cut(strings.TrimPrefix(sec, "rpt_"), "_")
	set.Revoke("tok_" + id)
	te.auth["revoked"] = "Bearer " + sec
	te.auth["bad"] = "Bearer rpt_0123456789abcdef_not-a-real-secret"
	te.auth["garbage"] = "Bearer nope"
	return te
}

func (te *tokenEnv) call(who, method, path string, body io.Reader, ct string) *apitest.Response {
	te.T.Helper()
	req, err := http.NewRequest(method, te.URL+path, body)
	if err != nil {
		te.T.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if h := te.auth[who]; h != "" {
		req.Header.Set("Authorization", h)
	}
	return te.Send(req)
}

// upload posts a small Markdown report into project, projectId before or
// after the file part.
func (te *tokenEnv) upload(who, project string, idFirst bool) *apitest.Response {
	parts := []apitest.Part{{Name: "fileType", Data: []byte("md")}, {Name: "file", FileName: "r.md", Data: []byte("# r\n")}}
	id := apitest.Part{Name: "projectId", Data: []byte(project)}
	if idFirst {
		parts = append([]apitest.Part{id}, parts...)
	} else {
		parts = append(parts, id)
	}
	body, ct := apitest.Multipart(parts...)
	return te.call(who, "POST", "/api/reports", body, ct)
}

func (te *tokenEnv) mustOK(r *apitest.Response) *apitest.Response {
	te.T.Helper()
	if r.StatusCode/100 != 2 {
		te.T.Fatalf("%s %s: %d %s", r.Request.Method, r.Request.URL, r.StatusCode, r.Body)
	}
	return r
}

// route is one row of the expected matrix, written out independently of
// httpapi's access table so that the test checks it.
type route struct {
	method, path string
	scope        tokens.Scope // 0: open to all
	project      bool         // about project 1: a token limited to project 2 is refused
	global       bool         // refused to any project-limited token
	anyone       bool         // unrouted: any valid token
	body         func(te *tokenEnv) (io.Reader, string)
	path2        func(te *tokenEnv) string // a fresh target, for deletes
}

func jsonBody(s string) func(*tokenEnv) (io.Reader, string) {
	return func(*tokenEnv) (io.Reader, string) { return strings.NewReader(s), "application/json" }
}

var tokenRoutes = []route{
	{method: "GET", path: "/api/projects", scope: tokens.Read},
	{method: "POST", path: "/api/projects", scope: tokens.Admin, body: jsonBody(`{"name":"new"}`)},
	{method: "GET", path: "/api/projects/1", scope: tokens.Read, project: true},
	{method: "HEAD", path: "/api/projects/1", scope: tokens.Read, project: true},
	{method: "PUT", path: "/api/projects/1", scope: tokens.Admin, body: func(*tokenEnv) (io.Reader, string) {
		return apitest.Multipart(apitest.Part{Name: "description", Data: []byte("d")})
	}},
	{method: "DELETE", scope: tokens.Admin, path2: func(te *tokenEnv) string {
		var p report.Project
		te.mustOK(te.call("legacy", "POST", "/api/projects", strings.NewReader(`{"name":"doomed"}`), "application/json")).JSON(te.T, &p)
		return fmt.Sprintf("/api/projects/%d", p.ID)
	}},
	{method: "GET", path: "/api/projects/1/history?name=u", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/projects/1/retention", scope: tokens.Read, project: true},
	{method: "PUT", path: "/api/projects/1/retention", scope: tokens.Admin, body: jsonBody(`{}`)},
	{method: "POST", path: "/api/projects/1/prune?dryRun=true", scope: tokens.Admin},
	{method: "POST", path: "/api/prune?dryRun=true", scope: tokens.Admin},
	{method: "GET", path: "/api/reports/ping"},
	{method: "GET", path: "/livez"},  // probes: open even with auth.reads
	{method: "GET", path: "/readyz"}, // (a bad token is not even looked at)
	{method: "GET", path: "/api/reports", scope: tokens.Read},
	{method: "GET", path: "/api/reports?projectId=1", scope: tokens.Read, project: true},
	{method: "POST", path: "/api/reports", scope: tokens.Upload, project: true, body: func(*tokenEnv) (io.Reader, string) {
		return apitest.Multipart(apitest.Part{Name: "projectId", Data: []byte("1")}, apitest.Part{Name: "fileType", Data: []byte("md")},
			apitest.Part{Name: "file", FileName: "u.md", Data: []byte("# u\n")})
	}},
	{method: "GET", path: "/api/reports/1", scope: tokens.Read, project: true},
	{method: "PUT", path: "/api/reports/1", scope: tokens.Admin, body: jsonBody(`{"fileName":"renamed.md"}`)},
	{method: "DELETE", scope: tokens.Admin, path2: func(te *tokenEnv) string {
		var r report.Report
		te.mustOK(te.upload("legacy", "1", true)).JSON(te.T, &r)
		return fmt.Sprintf("/api/reports/%d", r.ID)
	}},
	{method: "GET", path: "/api/reports/1/preview", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/reports/1/download", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/reports/1/pdf", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/reports/1/pdf?waitForExpression=true", scope: tokens.Upload, project: true}, // a scripted wait
	{method: "GET", path: "/api/reports/1/html", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/reports/1/files", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/reports/1/compare", scope: tokens.Read, project: true},
	{method: "GET", path: "/api/openapi.json", scope: tokens.Read},
	{method: "GET", path: "/uploads/reports/1.md", scope: tokens.Read, project: true},
	{method: "GET", path: "/uploads/covers/1/x.png", scope: tokens.Read, project: true},
	{method: "GET", path: "/metrics", scope: tokens.Read, global: true},
	{method: "POST", path: "/metrics", anyone: true},
	{method: "POST", path: "/livez", anyone: true},
	{method: "POST", path: "/readyz", anyone: true},
	{method: "GET", path: "/p/1/latest", scope: tokens.Read, project: true},
	{method: "GET", path: "/p/1/badge.svg", scope: tokens.Read, project: true},
	{method: "GET", path: "/p/A/latest/pdf", scope: tokens.Read}, // by name: another project's name is not found for a limited token (TestLinksWithScopedTokensOnly), not refused
	{method: "GET", path: "/p/1", scope: tokens.Read},            // names no link: NotFound for anyone let in
	{method: "POST", path: "/p/1/latest", anyone: true},
	{method: "GET", path: "/dl/reportctl/linux-amd64", scope: tokens.Read},
	{method: "GET", path: "/dl/checksums.txt", scope: tokens.Read},
	{method: "GET", path: "/dl/install.sh", scope: tokens.Read},
	{method: "POST", path: "/dl/install.sh", anyone: true},
	{method: "PUT", path: "/api/reports/ping", anyone: true},
	{method: "DELETE", path: "/api/reports/ping", anyone: true},
	{method: "POST", path: "/uploads/reports/1.md", anyone: true},
	{method: "GET", path: "/api/nowhere", anyone: true},
	{method: "POST", path: "/api/nowhere", anyone: true},
	{method: "GET", path: "/", scope: 0},
}

var tokenPrincipals = []struct {
	name     string
	scope    tokens.Scope // 0: no valid token
	presents bool         // sends an Authorization header
	limit    int64        // 0: global
}{
	{name: "none"},
	{name: "bad", presents: true},
	{name: "garbage", presents: true},
	{name: "expired", presents: true},
	{name: "revoked", presents: true},
	{name: "read", scope: tokens.Read, presents: true},
	{name: "readA", scope: tokens.Read, presents: true, limit: 1},
	{name: "readB", scope: tokens.Read, presents: true, limit: 2},
	{name: "uploadA", scope: tokens.Upload, presents: true, limit: 1},
	{name: "uploadB", scope: tokens.Upload, presents: true, limit: 2},
	{name: "admin", scope: tokens.Admin, presents: true},
	{name: "legacy", scope: tokens.Admin, presents: true},
}

// want is the expected error kind ("" for allowed) of one cell.
func (rt route) want(scope tokens.Scope, presents bool, limit int64, reads bool) report.Kind {
	if rt.scope == 0 && !rt.anyone {
		return "" // open: a token is not even looked at
	}
	if presents && scope == 0 {
		return report.Unauthorized // a presented token that is bad is always refused
	}
	reading := rt.scope == tokens.Read || (rt.anyone && (rt.method == "GET" || rt.method == "HEAD"))
	if reading && !reads {
		return ""
	}
	if scope == 0 {
		return report.Unauthorized
	}
	if rt.anyone {
		return ""
	}
	if reads && strings.Contains(rt.path, "waitForExpression=") && limit != 0 && limit != 1 {
		// The PDF route's own check (a read of a report outside the
		// token's projects: 404) comes before the scripted wait's scope.
		return report.NotFound
	}
	if scope < rt.scope || (limit != 0 && rt.global) {
		return report.Forbidden
	}
	if limit != 0 && rt.project && limit != 1 {
		if strings.Contains(rt.path, "/badge.") {
			return "" // a badge answers as for a missing project, whatever that answer is
		}
		return report.NotFound // outside the token's projects: as if it did not exist
	}
	return ""
}

// patternOf is the mux pattern a row of tokenRoutes exercises.
func (rt route) patternOf() string {
	m := rt.method
	if m == "HEAD" {
		m = "GET"
	}
	p, q, _ := strings.Cut(rt.path, "?")
	switch {
	case strings.Contains(q, "waitForExpression="):
		return "GET /api/reports/{id}/pdf?waitForExpression"
	case strings.HasPrefix(p, "/uploads/"):
		if m == "GET" {
			return "GET /uploads/"
		}
		return "/uploads/"
	case p == "/api/nowhere":
		return "/api/"
	case p == "/":
		return "/"
	case (p == "/metrics" || p == "/livez" || p == "/readyz") && m != "GET":
		return p
	case strings.HasPrefix(p, "/p/") && m != "GET":
		return "/p/"
	case strings.HasPrefix(p, "/dl/") && m != "GET":
		return "/dl/"
	case strings.HasPrefix(p, "/dl/reportctl/"):
		return "GET /dl/reportctl/{target}"
	case strings.HasPrefix(p, "/dl/"):
		return m + " " + p
	case strings.HasPrefix(p, "/p/") && strings.Count(p, "/") == 2:
		return "GET /p/{project}"
	case strings.HasPrefix(p, "/p/"):
		return "GET /p/{project}/{rest...}"
	}
	p = regexp.MustCompile(`/\d+`).ReplaceAllString(p, "/{id}")
	return m + " " + p
}

// TestTokenRoutesCoverTheMatrix: the test below walks every row of the
// access matrix (and the matrix has a row for every route: New panics).
func TestTokenRoutesCoverTheMatrix(t *testing.T) {
	// The two deletes make a fresh target each time (path2).
	covered := map[string]bool{"DELETE /api/projects/{id}": true, "DELETE /api/reports/{id}": true}
	for _, rt := range tokenRoutes {
		if rt.path2 == nil {
			covered[rt.patternOf()] = true
		}
	}
	for _, p := range httpapi.AccessPatterns() {
		if !covered[p] {
			t.Errorf("no row of tokenRoutes exercises %q", p)
		}
	}
}

// TestTokenScopesMatrix: every route × every kind of caller, in both
// error-status modes, with reads closed and open.
func TestTokenScopesMatrix(t *testing.T) {
	for _, mode := range []httpapi.StatusMode{httpapi.StatusConventional, httpapi.StatusSpec} {
		for _, reads := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/reads=%v", mode, reads), func(t *testing.T) {
				te := startTokenEnv(t, mode, reads)
				for _, rt := range tokenRoutes {
					for _, p := range tokenPrincipals {
						path := rt.path
						if rt.path2 != nil {
							path = rt.path2(te)
						}
						var body io.Reader
						var ct string
						if rt.body != nil {
							body, ct = rt.body(te)
						}
						r := te.call(p.name, rt.method, path, body, ct)
						want := rt.want(p.scope, p.presents, p.limit, reads)
						checkCell(t, mode, fmt.Sprintf("%s %s as %s", rt.method, path, p.name), r, want)
					}
				}
			})
		}
	}
}

// stableLink says r was a request for a stable link or badge (/p/...).
func stableLink(r *apitest.Response) bool { return strings.HasPrefix(r.Request.URL.Path, "/p/") }

func checkCell(t *testing.T, mode httpapi.StatusMode, cell string, r *apitest.Response, want report.Kind) {
	t.Helper()
	if r.Request.Method == "HEAD" { // no body: the status must tell
		status := map[report.Kind]int{"": 200, report.Unauthorized: 401, report.Forbidden: 403, report.NotFound: 404}[want]
		if mode == httpapi.StatusSpec && want != "" && !stableLink(r) {
			status = 500
		}
		if r.StatusCode != status {
			t.Errorf("%s: got %d, want %d", cell, r.StatusCode, status)
		}
		return
	}
	var body struct{ Error, Type string }
	json.Unmarshal(r.Body, &body)
	got := report.Kind(body.Type)
	if got != report.Unauthorized && got != report.Forbidden && (got != report.NotFound || want != report.NotFound) {
		got = "" // let in: the handler's own answer (a 404 of a path that names nothing) is not the matrix's
	}
	if got != want {
		t.Errorf("%s: got %d %q, want %q: %s", cell, r.StatusCode, got, want, r.Body)
		return
	}
	if want == "" {
		return
	}
	status := map[report.Kind]int{report.Unauthorized: 401, report.Forbidden: 403, report.NotFound: 404}[want]
	if mode == httpapi.StatusSpec && !stableLink(r) { // links: conventional in every mode
		status = 500
	}
	if r.StatusCode != status || !strings.HasPrefix(body.Error, string(want)+": ") {
		t.Errorf("%s: %d %s, want status %d and an {error, type} body", cell, r.StatusCode, r.Body, status)
	}
	if want == report.Unauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("%s: 401 without WWW-Authenticate: Bearer", cell)
	}
	if want == report.Forbidden && !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Errorf("%s: 403 without WWW-Authenticate: Bearer error=\"insufficient_scope\"", cell)
	}
	if want == report.Forbidden && !strings.Contains(body.Error, "scope") && !strings.Contains(body.Error, "limited to projects") {
		t.Errorf("%s: the 403 does not say what is missing: %s", cell, body.Error)
	}
	if want == report.NotFound && (strings.Contains(body.Error, "token") || strings.Contains(body.Error, "limited")) {
		t.Errorf("%s: the 404 says more than a missing one would: %s", cell, body.Error)
	}
}

// An upload token limited to project 2 cannot publish into project 1,
// whichever part comes first: it is told what a missing project gets (404
// "project 1 not found"), and nothing of the refused upload stays: no row,
// no file, no temp file.
func TestTokenForeignUploadStoresNothing(t *testing.T) {
	te := startTokenEnv(t, httpapi.StatusConventional, false)
	before := te.Tree()
	var list []report.Report
	te.call("admin", "GET", "/api/reports", nil, "").JSON(t, &list)
	for _, idFirst := range []bool{true, false} {
		r := te.upload("uploadB", "1", idFirst)
		missing := te.upload("uploadB", "99", idFirst)
		if r.StatusCode != http.StatusNotFound || missing.StatusCode != http.StatusNotFound ||
			!strings.Contains(string(r.Body), "NotFoundError: project 1 not found") || !strings.Contains(string(missing.Body), "NotFoundError: project 99 not found") {
			t.Fatalf("idFirst=%v: %d %s (a missing project: %d %s)", idFirst, r.StatusCode, r.Body, missing.StatusCode, missing.Body)
		}
	}
	var after []report.Report
	te.call("admin", "GET", "/api/reports", nil, "").JSON(t, &after)
	if len(after) != len(list) {
		t.Errorf("%d reports after refused uploads, want %d", len(after), len(list))
	}
	if got := te.Tree(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("files changed:\nbefore %v\nafter  %v", before, got)
	}
	// Into its own project it works, and a read token cannot upload at all.
	te.mustOK(te.upload("uploadB", "2", false))
	if r := te.upload("read", "2", true); r.StatusCode != http.StatusForbidden || !strings.Contains(string(r.Body), "has scope read; uploading a report needs scope upload") {
		t.Errorf("read token uploading: %d %s", r.StatusCode, r.Body)
	}
}

// With auth.reads a project-limited token lists only its projects and
// their reports, and naming another project is a 404, as a missing one.
func TestTokenListsAreFiltered(t *testing.T) {
	te := startTokenEnv(t, httpapi.StatusConventional, true)
	var ps []report.Project
	te.mustOK(te.call("readA", "GET", "/api/projects", nil, "")).JSON(t, &ps)
	if len(ps) != 1 || ps[0].ID != 1 {
		t.Errorf("readA sees projects %+v", ps)
	}
	var rs []report.Report
	te.mustOK(te.call("uploadB", "GET", "/api/reports", nil, "")).JSON(t, &rs)
	if len(rs) != 1 || rs[0].ProjectID != 2 {
		t.Errorf("uploadB sees reports %+v", rs)
	}
	if r := te.call("readA", "GET", "/api/reports?projectId=2", nil, ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("readA listing project 2: %d %s", r.StatusCode, r.Body)
	}
	// A report or project outside the token's projects answers exactly what
	// a missing one answers: the existence of report 2 is not given away.
	for _, c := range [][2]string{{"/api/reports/2", "/api/reports/999"}, {"/api/projects/2", "/api/projects/999"},
		{"/api/reports/2/download", "/api/reports/999/download"}} {
		there, missing := te.call("readA", "GET", c[0], nil, ""), te.call("readA", "GET", c[1], nil, "")
		norm := func(b []byte, id string) string { return strings.ReplaceAll(string(b), id, "N") }
		if there.StatusCode != http.StatusNotFound || missing.StatusCode != http.StatusNotFound ||
			norm(there.Body, "2") != norm(missing.Body, "999") {
			t.Errorf("readA %s: %d %s; %s: %d %s", c[0], there.StatusCode, there.Body, c[1], missing.StatusCode, missing.Body)
		}
	}
	there, missing := te.call("readA", "GET", "/p/2/badge.svg", nil, ""), te.call("readA", "GET", "/p/999/badge.svg", nil, "")
	if there.StatusCode != missing.StatusCode || strings.ReplaceAll(string(there.Body), "2", "N") != strings.ReplaceAll(string(missing.Body), "999", "N") {
		t.Errorf("readA's badge of project 2: %d %s; of a missing project: %d %s", there.StatusCode, there.Body, missing.StatusCode, missing.Body)
	}
	te.mustOK(te.call("read", "GET", "/api/projects", nil, "")).JSON(t, &ps)
	if len(ps) != 2 {
		t.Errorf("a global read token sees %d projects", len(ps))
	}
}

// No secret reaches the daemon's log: not on success, not on refusal,
// not when tokens are created through the admin route.
func TestTokenNeverLogged(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := apitest.Start(t, apitest.Options{Log: log, Config: func(c *config.Config) { c.Auth.Reads, c.Admin.Enabled = true, true }})
	_, secret, err := e.Server.Tokens().Create(tokens.Spec{Scope: tokens.Admin})
	if err != nil {
		t.Fatal(err)
	}
	te := &tokenEnv{Env: e, auth: map[string]string{"admin": "Bearer " + secret, "bad": "Bearer " + secret + "x", "weird": "Bearer rpt_secretish"}}
	te.mustOK(te.call("admin", "GET", "/api/projects", nil, ""))
	te.call("bad", "GET", "/api/projects", nil, "")
	te.call("weird", "POST", "/api/projects", strings.NewReader(`{"name":"x"}`), "application/json")
	te.call("bad", "GET", "/admin/tokens", nil, "")
	var created struct{ Secret string }
	te.mustOK(te.call("admin", "POST", "/admin/tokens", strings.NewReader(`{"scope":"read"}`), "application/json")).JSON(t, &created)
	if !strings.HasPrefix(created.Secret, "rpt_") {
		t.Fatalf("created %+v", created)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "msg=request") {
		t.Fatalf("no request lines captured:\n%s", out)
	}
	for _, s := range []string{secret, secret[20:], created.Secret, created.Secret[20:], "rpt_secretish", "Bearer", "Authorization"} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds %q:\n%s", s, out)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// The admin routes take an admin token (and nothing less) besides the key.
func TestTokenAdminRoutes(t *testing.T) {
	te := startTokenEnv(t, httpapi.StatusConventional, false)
	for who, want := range map[string]int{"none": 401, "bad": 401, "revoked": 401, "read": 403, "uploadA": 403, "admin": 200, "legacy": 200} {
		for _, path := range []string{"/admin/tokens", "/admin/backup"} {
			if r := te.call(who, "GET", path, nil, ""); r.StatusCode != want {
				t.Errorf("GET %s as %s: %d, want %d: %.200s", path, who, r.StatusCode, want, r.Body)
			}
		}
	}
	var list []tokens.Token
	te.mustOK(te.call("admin", "GET", "/admin/tokens", nil, "")).JSON(t, &list)
	if len(list) < 8 || strings.Contains(string(te.call("admin", "GET", "/admin/tokens", nil, "").Body), "hash") {
		t.Errorf("list: %d tokens", len(list))
	}
	r := te.call("admin", "POST", "/admin/tokens", strings.NewReader(`{"scope":"upload","projects":[9]}`), "application/json")
	if r.StatusCode != 400 || !strings.Contains(string(r.Body), "project 9 does not exist") {
		t.Errorf("token for a missing project: %d %s", r.StatusCode, r.Body)
	}
	var c struct {
		Token  tokens.Token
		Secret string
	}
	te.mustOK(te.call("admin", "POST", "/admin/tokens", strings.NewReader(`{"scope":"upload","projects":[2],"expires":"90d","name":"ci"}`), "application/json")).JSON(t, &c)
	te.auth["new"] = "Bearer " + c.Secret
	te.mustOK(te.upload("new", "2", true))
	te.mustOK(te.call("admin", "DELETE", "/admin/tokens/"+c.Token.ID, nil, ""))
	if r := te.upload("new", "2", true); r.StatusCode != 401 || !strings.Contains(string(r.Body), "revoked") {
		t.Errorf("upload with a revoked token: %d %s", r.StatusCode, r.Body)
	}
}

// Scoped tokens only (no auth.token) and auth.reads: badges are cached
// privately, and a project-limited token cannot probe other projects'
// names or ids through /p/ links (their names are simply not found).
func TestLinksWithScopedTokensOnly(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.Auth.Reads = true
	}})
	for _, name := range []string{"A", "B", "C", "C"} {
		e.CreateProject(name)
	}
	e.MustUpload(1, "a.md", report.MD, []byte("# a"))
	e.MustUpload(2, "b.md", report.MD, []byte("# b"))
	_, readA, err := e.Server.Tokens().Create(tokens.Spec{Scope: tokens.Read, Projects: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) *apitest.Response {
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+readA)
		return e.Send(req)
	}
	r := get("/p/A/badge.svg")
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "private, max-age=60" {
		t.Errorf("badge with reads behind scoped tokens: %d %q, want a private cache", r.StatusCode, r.Header.Get("Cache-Control"))
	}
	// B exists but is not the token's: not found, exactly like a name no project has.
	hidden, none := get("/p/B/badge.json"), get("/p/Nope/badge.json")
	// (An unknown project is a 404, not a badge; the names differ, nothing else.)
	if hidden.StatusCode != 404 || strings.ReplaceAll(string(hidden.Body), `\"B\"`, `\"Nope\"`) != string(none.Body) {
		t.Errorf("a hidden project's badge %d %s differs from a missing one's %s", hidden.StatusCode, hidden.Body, none.Body)
	}
	for _, path := range []string{"/p/B/latest", "/p/C/latest"} {
		wantLinkError(t, get(path), report.NotFound)
		if strings.Contains(string(get(path).Body), "ids") {
			t.Errorf("%s names other projects' ids: %s", path, get(path).Body)
		}
	}
	wantLinkError(t, get("/p/A/badge.svg?label="+strings.Repeat("x", 101)), report.Validation)
	if r := get("/p/A/badge.svg?label=" + strings.Repeat("é", 100)); r.StatusCode != 200 {
		t.Errorf("a 100-character label: %d", r.StatusCode)
	}
}
