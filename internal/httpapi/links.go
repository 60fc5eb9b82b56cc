package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// dashboardBase is the absolute URL the dashboard is served at, without a
// trailing slash: the configured public_url, else the scheme and Host of
// the request (which HostGuard has already allowed).
func (s *Server) dashboardBase(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// withLink sets rep's dashboardUrl: the dashboard's hash route for it.
func withLink(base string, rep *report.Report) {
	rep.DashboardURL = base + "/#/reports/" + strconv.FormatInt(rep.ID, 10)
}

func (s *Server) withLinks(r *http.Request, reps []report.Report) {
	base := s.dashboardBase(r)
	for i := range reps {
		withLink(base, &reps[i])
	}
}
