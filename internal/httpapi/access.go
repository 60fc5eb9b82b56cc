package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// need is what one route asks of the caller (docs/security.md, "Tokens").
type need struct {
	scope   tokens.Scope // 0: open to everyone, a token is not even looked at
	action  string       // named in a 403: "uploading a report needs scope upload"
	project projectFrom  // where the project a limited token must cover comes from
	global  bool         // refused to project-limited tokens
	creator bool         // also open to an upload token that creates projects (creator.go)
	anyone  bool         // unrouted paths: any valid token; none only where reads are open
}

// projectFrom says where a route's project is, for project-limited tokens.
type projectFrom int

const (
	noProject     projectFrom = iota
	projectInPath             // {id} is a project
	reportInPath              // {id} is a report: its project
	projectQuery              // ?projectId= when given; the handler filters otherwise
	projectForm               // the upload's projectId field: the handler checks it
	listFiltered              // the handler drops what the token does not cover
	uploadsPath               // /uploads/reports/<id>.<ext>, /uploads/covers/<project>/...
)

var (
	read   = func(action string, p projectFrom) need { return need{scope: tokens.Read, action: action, project: p} }
	upload = func(action string, p projectFrom) need { return need{scope: tokens.Upload, action: action, project: p} }
	admin  = func(action string) need { return need{scope: tokens.Admin, action: action} }
	open   = need{}
	anyone = need{anyone: true}
)

// access is the authorisation matrix, the one place that says which scope
// each route needs. routes() registers nothing that has no row here (New
// panics), and the token tests walk every row. With no auth.token and no
// live scoped token every route is open, as the API spec has it.
var access = map[string]need{
	"GET /api/projects":                read("listing projects", listFiltered),
	"POST /api/projects":               {scope: tokens.Admin, action: "creating a project", creator: true},
	"GET /api/projects/{id}":           read("reading a project", projectInPath),
	"PUT /api/projects/{id}":           admin("changing a project"),
	"DELETE /api/projects/{id}":        admin("deleting a project"),
	"GET /api/reports/ping":            open,
	"GET /livez":                       open, // probes: no token, even with auth.reads (health.go)
	"GET /readyz":                      open,
	"PUT /api/reports/ping":            anyone,
	"DELETE /api/reports/ping":         anyone,
	"GET /api/reports":                 read("listing reports", projectQuery),
	"POST /api/reports":                upload("uploading a report", projectForm),
	"GET /api/reports/{id}":            read("reading a report", reportInPath),
	"PUT /api/reports/{id}":            admin("changing a report"),
	"DELETE /api/reports/{id}":         admin("deleting a report"),
	"GET /api/reports/{id}/preview":    read("reading a report", reportInPath),
	"GET /api/reports/{id}/download":   read("reading a report", reportInPath),
	"GET /api/reports/{id}/pdf":        read("reading a report", reportInPath),
	scriptedPDF:                        upload("printing with a scripted wait (waitForExpression)", reportInPath),
	"GET /api/reports/{id}/html":       read("reading a report", reportInPath),
	"GET /api/reports/{id}/files":      read("reading a report", reportInPath),
	"GET /api/reports/{id}/compare":    read("reading a report", reportInPath),
	"GET /api/openapi.json":            read("reading the API description", noProject),
	"GET /uploads/":                    read("reading a file", uploadsPath),
	"GET /metrics":                     {scope: tokens.Read, action: "reading metrics", global: true},
	"GET /api/projects/{id}/history":   read("reading a project's history", noProject), // {id} may be a slug: the handler checks the project once resolved
	"GET /api/projects/{id}/retention": read("reading a project", projectInPath),
	"PUT /api/projects/{id}/retention": admin("changing a project's retention"),
	"POST /api/projects/{id}/prune":    admin("pruning reports"),
	"POST /api/prune":                  admin("pruning reports"),
	"GET /p/{project}/{rest...}":       read("reading a project's reports", noProject), // the handler checks the project once resolved
	"GET /p/{project}":                 read("reading a project's reports", noProject),
	"GET /dl/reportctl/{target}":       read("downloading reportctl", noProject),
	"GET /dl/checksums.txt":            read("downloading reportctl", noProject),
	"GET /dl/install.sh":               read("downloading reportctl", noProject),
	"/p/":                              anyone,
	"/dl/":                             anyone,
	"/metrics":                         anyone,
	"/livez":                           anyone,
	"/readyz":                          anyone,
	"/api/":                            anyone,
	"/uploads/":                        anyone,
	"/":                                open, // the dashboard's own files: no data in them
}

// scriptedPDF is a row of the matrix that is not a route: the pdf handler
// adds its check when the request has waitForExpression, JavaScript of the
// requester's that runs inside the report before it prints (evaluated
// without side effects all the same, printoptions.go in internal/convert/chromium).
const scriptedPDF = "GET /api/reports/{id}/pdf?waitForExpression"

type principalKey struct{}

// principalOf is the token a request was authorised with; nil when it
// carried none (or no auth is configured).
func principalOf(ctx context.Context) *tokens.Principal {
	p, _ := ctx.Value(principalKey{}).(*tokens.Principal)
	return p
}

// authOn reports whether requests are checked at all: auth.token is set or
// a scoped token exists that was not revoked.
func (s *Server) authOn() bool {
	return s.cfg.AuthToken != "" || (s.cfg.Tokens != nil && s.cfg.Tokens.Enabled())
}

// Authenticate checks an Authorization header against the configured
// token (admin scope) and the scoped tokens; every failure is an
// UnauthorizedError. Exported for the daemon's admin routes.
func Authenticate(header, legacy string, set *tokens.Set) (*tokens.Principal, error) {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
		return nil, report.Errorf(report.Unauthorized, `the Authorization header must be "Bearer <token>"`)
	}
	if legacy != "" && SameSecret(cred, legacy) {
		return &tokens.Principal{ID: "auth.token", Scope: tokens.Admin}, nil
	}
	if set != nil && tokens.LooksLikeToken(cred) {
		p, err := set.Authenticate(cred)
		if err != nil {
			return nil, err
		}
		return &p, nil
	}
	return nil, report.Errorf(report.Unauthorized, "the bearer token is not valid")
}

// permit decides one request against its route's row. A request without a
// token is refused (401) where a token is required; a token that is
// presented is always checked, and a bad one is a 401 even where none is
// needed. A valid token whose scope falls short is a 403
// (ForbiddenError) that says what is missing; a project or report outside
// a project-limited token's projects is a 404 (outside). Where reads are open
// (auth.reads false) a token never narrows them.
func (s *Server) permit(r *http.Request, n need) (*http.Request, error) {
	if n == open || !s.authOn() {
		return r, nil
	}
	reading := n.scope == tokens.Read || (n.anyone && (r.Method == http.MethodGet || r.Method == http.MethodHead))
	var p *tokens.Principal
	if h := r.Header.Get("Authorization"); h != "" {
		var err error
		if p, err = Authenticate(h, s.cfg.AuthToken, s.cfg.Tokens); err != nil {
			return r, err
		}
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
	}
	if reading && !s.cfg.AuthReads {
		return r, nil
	}
	if p == nil {
		return r, s.tokenRequired(reading)
	}
	if n.anyone {
		return r, nil
	}
	if p.Scope < n.scope {
		if n.creator && p.Creates {
			return r, nil // the handler checks the name (creator.go)
		}
		if n.creator && p.Scope == tokens.Upload {
			return r, report.Errorf(report.Forbidden, "token %s has scope %s; %s needs scope %s, or an upload token made with --allow-create-projects", p.ID, p.Scope, n.action, n.scope)
		}
		return r, report.Errorf(report.Forbidden, "token %s has scope %s; %s needs scope %s", p.ID, p.Scope, n.action, n.scope)
	}
	if p.Global() {
		return r, nil
	}
	if n.global {
		return r, report.Errorf(report.Forbidden, "token %s is limited to projects %s; %s needs a token for every project", p.ID, projectList(p.Projects), n.action)
	}
	id, known, err := s.projectOf(r, n.project)
	if err != nil || !known {
		return r, err // unknown here: the handler answers (NotFound, Validation) or filters
	}
	if s.covers(p, id) {
		return r, nil
	}
	return r, s.outside(r, n.project, id)
}

// covers says whether p may act on project: one of its projects, or one
// this token created on another replica after the set here was read.
func (s *Server) covers(p *tokens.Principal, project int64) bool {
	if p.Covers(project) {
		return true
	}
	return p.Creates && s.cfg.Tokens != nil && s.cfg.Tokens.Covers(p.ID, project)
}

// tokenRequired is the 401 of a request that carried no token, saying why
// one is needed: a client (or person) that worked without one until a
// token was created learns what changed, not just that it failed.
func (s *Server) tokenRequired(reading bool) error {
	if reading {
		return report.Errorf(report.Unauthorized, "a valid bearer token is required: on this server reads need a token too (auth.reads); send Authorization: Bearer <token>")
	}
	why := "a valid bearer token is required: this server has tokens (auth.token or reportd token create), so every change, uploads included, needs one; send Authorization: Bearer <token>"
	if !s.cfg.AuthReads {
		why += " (reads stay open without one)"
	}
	return report.Errorf(report.Unauthorized, "%s", why)
}

// outside is the answer to a project-limited token about a project or
// report beyond its projects: the NotFoundError a missing one gets, word
// for word, so the token learns nothing of what exists elsewhere (401 is
// a bad or missing token, 403 a missing scope, 404 this).
func (s *Server) outside(r *http.Request, from projectFrom, project int64) error {
	switch from {
	case reportInPath:
		if id, err := pathID(r); err == nil {
			return report.NoSuch("report", id)
		}
	case uploadsPath:
		return report.Errorf(report.NotFound, "file not found: %s", r.URL.Path)
	}
	return report.NoSuch("project", project)
}

// permitProject is the check of a project named inside a body (the
// upload's projectId) or resolved from a name, for the handler to call as
// soon as it knows it: a project outside a limited token's is not found.
func (s *Server) permitProject(r *http.Request, project int64) error {
	p := principalOf(r.Context())
	if p == nil || p.Global() || !s.authOn() || s.covers(p, project) {
		return nil
	}
	return s.outside(r, projectForm, project)
}

// visible is the filter for lists: nil when the caller sees everything.
func (s *Server) visible(r *http.Request) func(project int64) bool {
	p := principalOf(r.Context())
	if p == nil || p.Global() || !s.cfg.AuthReads || !s.authOn() {
		return nil
	}
	return p.Covers
}

// projectOf finds the project a request is about; known is false when the
// request does not say (or says it badly: the handler then answers).
func (s *Server) projectOf(r *http.Request, from projectFrom) (id int64, known bool, err error) {
	switch from {
	case projectInPath:
		id, err := pathID(r)
		return id, err == nil, nil
	case reportInPath:
		rid, err := pathID(r)
		if err != nil {
			return 0, false, nil
		}
		return s.reportProject(r, rid)
	case projectQuery:
		v := r.URL.Query().Get("projectId")
		if v == "" {
			return 0, false, nil
		}
		id, err := report.ParseID("projectId", v)
		return id, err == nil, nil
	case uploadsPath:
		rest := strings.TrimPrefix(r.URL.Path, "/uploads/")
		dir, name, _ := strings.Cut(rest, "/")
		name, _, _ = strings.Cut(name, "/")
		num, _, _ := strings.Cut(name, ".")
		n, perr := strconv.ParseInt(num, 10, 64)
		switch {
		case perr != nil || n <= 0:
		case dir == "covers":
			return n, true, nil
		case dir == "reports", dir == "sites":
			return s.reportProject(r, n)
		}
		return 0, true, nil // no project of its own: covered by no limited token
	}
	return 0, false, nil
}

func (s *Server) reportProject(r *http.Request, id int64) (int64, bool, error) {
	pid, err := s.svc.ReportProject(r.Context(), id)
	if report.IsKind(err, report.NotFound) {
		return 0, false, nil
	}
	return pid, err == nil, err
}

func projectList(ps []int64) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatInt(p, 10)
	}
	return strings.Join(s, ", ")
}

// guard wraps a route's handler in its row of the access matrix.
func (s *Server) guard(pattern string, h http.Handler) http.Handler {
	n, ok := access[pattern]
	if !ok {
		panic(fmt.Sprintf("httpapi: route %q has no row in the access matrix", pattern))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := s.permit(r, n)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}
