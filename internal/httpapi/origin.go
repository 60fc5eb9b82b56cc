package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// crossOrigin refuses a state-changing request (POST, PUT, PATCH, DELETE)
// that a browser sent on behalf of another site: Sec-Fetch-Site is
// cross-site or same-site (a report's origin such as 7.localhost is the
// same site as localhost), or an Origin header names neither the API's
// own origin nor public_url's. With no token (the loopback default) a
// report's page could otherwise delete reports through the reader's
// browser; with a token it still must not try. API clients (curl,
// reportctl) send neither header and are not affected, nor are reads and
// preflights (which keep answering 204 with "*").
func (s *Server) crossOrigin(r *http.Request) error {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil
	}
	site := r.Header.Get("Sec-Fetch-Site")
	origin := r.Header.Get("Origin")
	if site == "cross-site" || site == "same-site" {
		return notOwnOrigin(r.Method, origin, "Sec-Fetch-Site: "+site)
	}
	if _, sent := r.Header["Origin"]; !sent || s.ownOrigin(r, origin) {
		return nil
	}
	return notOwnOrigin(r.Method, origin, "Origin")
}

// ownOrigin tells whether origin is the API's own (the request's Host, by
// either scheme: behind a TLS proxy the daemon sees http) or public_url's.
func (s *Server) ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false // "null" (sandboxed frames, file://) and anything malformed
	}
	if sameHost(u.Scheme, u.Host, r.Host) {
		return true
	}
	if p, err := url.Parse(s.cfg.PublicURL); err == nil && p.Host != "" {
		return strings.EqualFold(p.Scheme, u.Scheme) && sameHost(u.Scheme, u.Host, p.Host)
	}
	return false
}

// sameHost compares two host[:port] forms, a scheme's default port
// written or not.
func sameHost(scheme, a, b string) bool {
	def := ":80"
	if strings.EqualFold(scheme, "https") {
		def = ":443"
	}
	norm := func(h string) string { return strings.TrimSuffix(strings.ToLower(h), def) }
	return norm(a) == norm(b)
}

func notOwnOrigin(method, origin, why string) error {
	from := origin
	if from == "" {
		from = "another site"
	}
	return crossOriginError{report.Errorf(report.Forbidden,
		"%s from %s refused (%s): a web page on another origin may not change anything here; "+
			"use the dashboard, reportctl or an API client (they send no Origin, or this API's own)", method, from, why)}
}

// crossOriginError is a ForbiddenError that is not about a token's scope
// (no insufficient_scope challenge).
type crossOriginError struct{ error }

func (e crossOriginError) Unwrap() error { return e.error }

func isCrossOrigin(err error) bool {
	var c crossOriginError
	return errors.As(err, &c)
}
