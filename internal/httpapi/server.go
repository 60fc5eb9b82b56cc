// Package httpapi serves the Report Publishing Service API, the static
// /uploads tree and (optionally) the dashboard over net/http.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"path"
	"strings"

	"github.com/reportd/reportd/internal/idempotency"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// Config holds the HTTP layer's switches.
type Config struct {
	ErrorStatus StatusMode
	AuthToken   string // empty: no auth
	AuthReads   bool   // also require the token for reads
	// Tokens are the scoped tokens (nil: none); access.go decides.
	Tokens           *tokens.Set
	HTMLAllowScripts bool // add allow-scripts to the sandbox of uploaded HTML
	MaxJSONBytes     int64
	Dashboard        http.Handler // nil: none; served at "/"
	Metrics          http.Handler // nil: none; served at "/metrics"
	Observer         Observer     // nil: none
	// Health answers GET /livez and GET /readyz (health.go).
	Health Health

	// AllowedHosts are the Host names served besides the loopback ones
	// (localhost, *.localhost, 127.0.0.0/8, ::1): "name", "*.domain", or
	// "*" for any.
	AllowedHosts []string
	// Idempotency keeps the Idempotency-Key of uploads (nil: the header
	// is validated but not honoured; the daemon always sets it).
	Idempotency *idempotency.Keys
	// ReportHost, if set, tells whether a Host names one report's own
	// content origin ({id}.localhost:port and the like); the API and the
	// dashboard refuse those, whatever AllowedHosts says. nil: none.
	ReportHost func(host string) bool
	// PublicURL is the daemon's public base URL (config public_url); every
	// report's dashboardUrl starts with it. Empty: the request's host.
	PublicURL string
	// Pace bounds how slowly request bodies may arrive.
	Pace Pace
	// Badges configures the badge links (badge.go).
	Badges Badges
	// ContentURL, if set, is the absolute URL of file (a site-relative
	// path; "" for a site's root) of report id on the content origin,
	// signed when auth is on. It fills siteUrl and is where the preview of
	// a site and its /uploads/sites/ paths redirect. nil: no content
	// origin (siteUrl omitted; a site's preview is NotFound).
	ContentURL func(id int64, file string) string
	// PresignDownload, if set, may answer GET /api/reports/{id}/download
	// of a report that is neither html nor a site with a 302 to the URL it
	// returns (ok true): a presigned URL of the stored object whose
	// response carries disposition and contentType, the headers reportd
	// itself would send. ok false: served by reportd as usual. It is called
	// only after the access check. nil: never (the default; the daemon sets
	// it with storage: postgres+s3 and s3.presign_downloads).
	PresignDownload func(ctx context.Context, rec report.ReportRecord, disposition, contentType string) (url string, ok bool, err error)
	// ClientsDir is the folder GET /dl/ serves reportctl from (dl.go);
	// "" or missing: those routes answer 404 saying how to provide it.
	ClientsDir string
}

// Observer hears about every finished request (for metrics).
type Observer interface {
	ObserveRequest(r Request)
	ObserveUpload(bytes int64)
}

// Server is the HTTP face of a Service (service.go).
type Server struct {
	cfg   Config
	svc   Service
	log   *slog.Logger
	mux   *http.ServeMux
	hosts *hostPolicy
	// refusals are patterns registered only to refuse their method on a
	// literal path that a {id} pattern would otherwise take.
	refusals map[string]bool
}

// New builds the handler tree.
func New(cfg Config, svc Service, log *slog.Logger) *Server {
	if cfg.ErrorStatus == "" {
		cfg.ErrorStatus = StatusSpec
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxJSONBytes == 0 {
		cfg.MaxJSONBytes = 32 << 20 // a base64 cover fits
	}
	s := &Server{cfg: cfg, svc: svc, log: log, mux: http.NewServeMux(), hosts: newHostPolicy(cfg.AllowedHosts), refusals: map[string]bool{}}
	s.routes()
	return s
}

// ServeHTTP runs the middleware chain: request id and log line, CORS and
// security headers, preflight, cross-origin refusal (origin.go), then the routes, each behind its row of
// the access matrix (access.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.logged(http.HandlerFunc(s.serve)).ServeHTTP(w, r)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "Content-Disposition, Content-Length, Content-Range, Accept-Ranges, ETag, Last-Modified, X-Request-Id")
	h.Set("X-Content-Type-Options", "nosniff")
	if !s.hostServed(r.Host) && !probePath(r.URL.Path) {
		s.writeError(w, r, s.hostError(r))
		return
	}
	paced(w, r, s.cfg.Pace)
	if r.Method == http.MethodOptions {
		s.preflight(w, r)
		return
	}
	if err := s.crossOrigin(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !canonicalPath(r.URL.Path) {
		// The mux would answer a redirect to the cleaned path; a path with
		// "..", "." or "//" in it is a traversal attempt or a broken client,
		// and gets the API's error body instead.
		s.writeError(w, r, report.Errorf(report.NotFound, "no such path: %s", r.URL.Path))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// canonicalPath reports whether p is already clean (a trailing slash allowed).
func canonicalPath(p string) bool {
	c := path.Clean(p)
	return p == c || p == c+"/"
}

// preflight answers OPTIONS: the methods routed on this path, as Allow
// and Access-Control-Allow-Methods (every method where nothing is routed,
// so a browser's preflight of a mistyped path still gets its error body).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	methods := "GET, HEAD, POST, PUT, DELETE, OPTIONS"
	if allow := s.allowed(r); len(allow) > 0 {
		methods = strings.Join(append(allow, "OPTIONS"), ", ")
	}
	h.Set("Access-Control-Allow-Methods", methods)
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	} else {
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Range, If-None-Match, If-Modified-Since")
	}
	h.Set("Access-Control-Max-Age", "86400")
	h.Set("Allow", methods)
	w.WriteHeader(http.StatusNoContent)
}

// handle registers a method+path route.
func (s *Server) handle(method, path string, fn func(http.ResponseWriter, *http.Request) error) {
	pattern := method + " " + path
	s.mux.Handle(pattern, s.guard(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})))
}

func (s *Server) routes() {
	h := s.handle
	h("GET", "/api/projects", s.listProjects)
	h("POST", "/api/projects", s.createProject)
	h("GET", "/api/projects/{id}", getByID(s, Service.GetProject))
	h("PUT", "/api/projects/{id}", s.updateProject)
	h("DELETE", "/api/projects/{id}", deleteByID(s, Service.DeleteProject))
	h("GET", "/api/projects/{id}/history", s.history)
	h("GET", "/api/projects/{id}/retention", s.getRetention)
	h("PUT", "/api/projects/{id}/retention", s.putRetention)
	h("POST", "/api/projects/{id}/prune", s.pruneProject)
	h("POST", "/api/prune", s.pruneAll)

	h("GET", "/api/reports/ping", s.ping)
	h("GET", "/livez", s.livez)
	h("GET", "/readyz", s.readyz)
	s.refuse("PUT", "/api/reports/ping")    // not PUT /api/reports/{id}
	s.refuse("DELETE", "/api/reports/ping") // not DELETE /api/reports/{id}
	h("GET", "/api/reports", s.listReports)
	h("POST", "/api/reports", s.uploadReport)
	h("GET", "/api/reports/{id}", s.getReport)
	h("PUT", "/api/reports/{id}", s.updateReport)
	h("DELETE", "/api/reports/{id}", deleteByID(s, Service.DeleteReport))
	h("GET", "/api/reports/{id}/preview", s.original(inline))
	h("GET", "/api/reports/{id}/download", s.original(nil)) // nil: attachment, and a site's zip
	h("GET", "/api/reports/{id}/pdf", s.pdf)
	h("GET", "/api/reports/{id}/html", s.markdownHTML)
	h("GET", "/api/reports/{id}/files", s.reportFiles)
	h("GET", "/api/reports/{id}/compare", s.compare)

	h("GET", "/api/openapi.json", s.openAPI)
	h("GET", "/p/{project}/{rest...}", s.stable) // stable links and badges: latest.go
	h("GET", "/p/{project}", s.stable)           // not /p/{project}/ by redirect
	h("GET", "/uploads/", s.static)
	h("GET", "/dl/reportctl/{target}", s.dlClient)
	h("GET", "/dl/checksums.txt", s.dlChecksums)
	h("GET", "/dl/install.sh", s.dlInstall)

	s.mux.Handle("/api/", s.guard("/api/", http.HandlerFunc(s.unrouted)))
	s.mux.Handle("/uploads/", s.guard("/uploads/", http.HandlerFunc(s.unrouted)))
	s.mux.Handle("/p/", s.guard("/p/", http.HandlerFunc(s.unrouted)))
	s.mux.Handle("/livez", s.guard("/livez", http.HandlerFunc(s.unrouted)))   // other methods: 405 with Allow
	s.mux.Handle("/readyz", s.guard("/readyz", http.HandlerFunc(s.unrouted))) // other methods: 405 with Allow
	s.mux.Handle("/dl/", s.guard("/dl/", http.HandlerFunc(s.unrouted)))
	if s.cfg.Metrics != nil {
		s.mux.Handle("GET /metrics", s.guard("GET /metrics", s.cfg.Metrics))
		s.mux.Handle("/metrics", s.guard("/metrics", http.HandlerFunc(s.unrouted))) // other methods: 405 with Allow
	}
	if s.cfg.Dashboard != nil {
		s.mux.Handle("/", s.guard("/", s.cfg.Dashboard))
	} else {
		s.mux.Handle("/", s.guard("/", http.HandlerFunc(s.unrouted)))
	}
}

// refuse makes method on the literal path a MethodNotAllowedError.
func (s *Server) refuse(method, path string) {
	pattern := method + " " + path
	s.refusals[pattern] = true
	s.mux.Handle(pattern, s.guard(pattern, http.HandlerFunc(s.unrouted)))
}

// unrouted answers what no route took: MethodNotAllowedError (with Allow)
// when the path exists under another method, else NotFoundError. Allow
// lists the methods that have a route here, refusals excluded.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Pattern, " ") {
		// A catch-all ("/api/", "/metrics"): logged and counted as one route.
		noteUnmatched(r.Context())
	}
	allow := s.allowed(r)
	if len(allow) == 0 {
		s.writeError(w, r, report.Errorf(report.NotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	w.Header().Set("Allow", strings.Join(append(allow, "OPTIONS"), ", "))
	s.writeError(w, r, report.Errorf(report.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
}

// allowed lists the methods that have a route on r's path, refusals
// excluded (HEAD with GET).
func (s *Server) allowed(r *http.Request) []string {
	var allow []string
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); strings.HasPrefix(pattern, m+" ") && !s.refusals[pattern] {
			allow = append(allow, m)
			if m == "GET" {
				allow = append(allow, "HEAD")
			}
		}
	}
	return allow
}

// getByID answers GET .../{id} with what get (a method of Service)
// returns for the id.
func getByID[T any](s *Server, get func(Service, context.Context, int64) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		v, err := get(s.svc, r.Context(), id)
		if err == nil {
			writeJSON(w, http.StatusOK, v)
		}
		return err
	}
}

// deleteByID answers DELETE .../{id} with 204 once del (a method of
// Service) succeeds.
func deleteByID(s *Server, del func(Service, context.Context, int64) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if err := del(s.svc, r.Context(), id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// pathID parses the {id} segment.
func pathID(r *http.Request) (int64, error) {
	return report.ParseID("id", r.PathValue("id"))
}
