package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// hostPolicy is the Host allow-list. A web page that rebinds its own DNS
// name to 127.0.0.1 talks to the daemon as a same-origin page, but its
// requests still carry its own name in Host; refusing names the daemon
// does not know closes that door. Loopback names are always known.
type hostPolicy struct {
	any      bool            // "*": every Host (the check is off)
	names    map[string]bool // exact host names and IP literals, lower case
	suffixes []string        // from "*.example.com": ".example.com"
}

// newHostPolicy reads allowed entries: "name", "name:port" (the port is
// ignored), "[v6]", "*.domain" or "*".
func newHostPolicy(allowed []string) *hostPolicy {
	p := &hostPolicy{names: map[string]bool{}}
	for _, e := range allowed {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case e == "*":
			p.any = true
		case strings.HasPrefix(e, "*."):
			p.suffixes = append(p.suffixes, canonicalHost(e[1:]))
		default:
			p.names[canonicalHost(e)] = true
		}
	}
	return p
}

// canonicalHost is Host without its port and brackets, lower case, with no
// trailing dot; IP literals in their canonical text form.
func canonicalHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// allows reports whether a request with this Host header is served.
func (p *hostPolicy) allows(host string) bool {
	if p.any {
		return true
	}
	h := canonicalHost(host)
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || p.names[h] {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil && a.IsLoopback() {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// hostServed reports whether the API answers this Host: one the
// allow-list knows and not a report's own origin ({id}.localhost and the
// like, which Config.ReportHost recognises), so the dashboard never
// appears on a name that belongs to a report.
func (s *Server) hostServed(host string) bool {
	return s.hosts.allows(host) && (s.cfg.ReportHost == nil || !s.cfg.ReportHost(host))
}

// hostError refuses an unknown Host, or a report's: 421 Misdirected
// Request in conventional mode, 500 like every error in spec mode.
func (s *Server) hostError(r *http.Request) error {
	if s.cfg.ReportHost != nil && s.cfg.ReportHost(r.Host) {
		return withStatus{report.Errorf(report.Validation,
			"Host %q is a report's content origin (content.url), not the API: open reports through the links the API gives (siteUrl)", r.Host),
			http.StatusMisdirectedRequest}
	}
	return withStatus{report.Errorf(report.Validation,
		"Host %q is not served here; add it to allowed_hosts (or set public_url) in the reportd configuration", r.Host),
		http.StatusMisdirectedRequest}
}

// HostGuard refuses requests whose Host the allow-list does not know, and
// cross-origin changes (origin.go), before next sees them (the daemon wraps its admin endpoints with it; the
// API routes check the same in ServeHTTP).
func (s *Server) HostGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostServed(r.Host) {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			s.writeError(w, r, s.hostError(r))
			return
		}
		if err := s.crossOrigin(r); err != nil {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
