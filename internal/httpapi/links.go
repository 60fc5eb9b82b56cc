package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
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
		s.withSiteURL(&reps[i])
	}
}

// withReportLinks sets one report's dashboardUrl and siteUrl.
func (s *Server) withReportLinks(r *http.Request, rep *report.Report) {
	withLink(s.dashboardBase(r), rep)
	s.withSiteURL(rep)
}

// withSiteURL sets rep's siteUrl, the report on the content origin
// (Config.ContentURL), for sites and single-file html reports; none
// without a content origin.
func (s *Server) withSiteURL(rep *report.Report) {
	if file, ok := service.ContentEntry(rep); ok && s.cfg.ContentURL != nil {
		rep.SiteURL = s.cfg.ContentURL(rep.ID, file)
	}
}
