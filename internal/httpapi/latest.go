package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Stable links (docs/links.md): under /p/{project}/ the newest report of a
// project, optionally of one name and/or branch, by a URL that never
// changes.
//
//	/p/{project}/latest[/{name}][/{action}]   302 to the newest match
//	/p/{project}[/{name}]/badge.svg|.json     its badge (badge.go)
//	/p/{project}/{name}/trend.svg              a sparkline of its history (trend.go)
//
// {project} is an id, else a project's slug, else a name that exactly one
// project has ("acme%2Fapi" for "acme/api"). Actions are reserved words; a
// report whose name is one is reached with ?name=. ?type= narrows a name
// to one file type (deck.pdf and deck.pptx are both "deck"; without it
// the newest of any type answers); ?branch= narrows to one branch
// (empty: any).
//
// Stable links are not part of the seed API: their errors always have
// conventional statuses (404, 401, 403, 400), whatever error_status says,
// so that curl -f and uptime monitors work (errors.go).

// Actions of /latest: each sends the client to /api/reports/{id}/{action},
// site to the report's siteUrl on the content origin; without one, the
// link goes to the dashboard page.
var latestActions = map[string]bool{
	"pdf":      true,
	"download": true,
	"preview":  true,
	"site":     true, // the report on the content origin: its siteUrl
}

const (
	badgeSVG  = "badge.svg"
	badgeJSON = "badge.json"
	trendSVG  = "trend.svg" // trend.go
)

// link is a parsed /p/ path.
type link struct {
	project string // the reference as given
	name    *string
	typ     *report.FileType
	branch  *string
	action  string // "", pdf, download, preview, site, badge.svg, badge.json
}

// parseLink reads /p/{project}/... into a link. A malformed link is an
// error (an error body, for badges too); a well-formed one may still name
// nothing. An escaped "/" (%2F) is taken in the project (a project named
// "acme/api", as CI names them after the repository, is /p/acme%2Fapi/),
// but refused in the other segments, since proxies and routers disagree
// on it: a report name with a slash is reached with ?name=.
func parseLink(r *http.Request) (link, error) {
	rest, _ := strings.CutPrefix(r.URL.EscapedPath(), "/p/")
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	for i, s := range segs {
		if i > 0 && strings.Contains(strings.ToUpper(s), "%2F") {
			return link{}, report.Errorf(report.Validation, "an escaped / in %q: give a report name with / as ?name=", s)
		}
		v, err := url.PathUnescape(s)
		if err != nil {
			return link{}, report.Errorf(report.Validation, "bad escape in %q", s)
		}
		segs[i] = v
	}
	l := link{project: segs[0]}
	segs = segs[1:]
	isAction := func(s string) bool { return latestActions[s] }
	isBadge := func(s string) bool { return s == badgeSVG || s == badgeJSON || s == trendSVG }
	notFound := report.Errorf(report.NotFound, "no such link: %s (see /p/{project}/latest[/{name}][/pdf|download|preview|site] and /p/{project}[/{name}]/badge.svg)", r.URL.Path)
	switch {
	case len(segs) == 1 && isBadge(segs[0]):
		l.action = segs[0]
	case len(segs) == 2 && isBadge(segs[1]) && segs[0] != "latest":
		l.name, l.action = &segs[0], segs[1]
	case len(segs) >= 1 && segs[0] == "latest":
		switch segs = segs[1:]; {
		case len(segs) == 0:
		case len(segs) == 1 && (isAction(segs[0]) || isBadge(segs[0])):
			l.action = segs[0]
		case len(segs) == 1:
			l.name = &segs[0]
		case len(segs) == 2 && (isAction(segs[1]) || isBadge(segs[1])):
			l.name, l.action = &segs[0], segs[1]
		default:
			return link{}, notFound
		}
	default:
		return link{}, notFound
	}
	q := r.URL.Query()
	if v := q.Get("name"); v != "" {
		if l.name != nil && *l.name != v {
			return link{}, report.Errorf(report.Validation, "the path names report %q and ?name= %q: give one", *l.name, v)
		}
		l.name = &v
	}
	if v := q.Get("type"); v != "" {
		t := report.FileType(v)
		if _, ok := report.Lookup(t); !ok {
			return link{}, report.Errorf(report.Validation, "?type=%s is not a report type: want one of %s", v, report.TypeNames(", ", ", "))
		}
		if l.name == nil {
			return link{}, report.Errorf(report.Validation, "?type= narrows a report name to one file type: give the name too (/p/{project}/latest/{name}?type=%s)", t)
		}
		l.typ = &t
	}
	if v := q.Get("branch"); v != "" {
		l.branch = &v
	}
	return l, nil
}

// newest resolves l to its newest report.
func (s *Server) newest(r *http.Request, l link) (report.Report, error) {
	id, err := s.linkProject(r, l)
	if err != nil {
		return report.Report{}, err
	}
	return s.svc.Latest(r.Context(), report.LatestQuery{Project: id, Name: l.name, Type: l.typ, Branch: l.branch})
}

// linkProject resolves l's project to its id.
func (s *Server) linkProject(r *http.Request, l link) (int64, error) {
	id, err := s.svc.ResolveProject(r.Context(), l.project, s.visible(r))
	if err != nil {
		return 0, err
	}
	// {project} may be a slug or a name: a project-limited token is
	// checked here, once it is known which project the link means (where
	// reads need a token at all: a token never narrows open reads).
	if s.cfg.AuthReads {
		if err := s.permitProject(r, id); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// stable answers every GET under /p/.
func (s *Server) stable(w http.ResponseWriter, r *http.Request) error {
	l, err := parseLink(r)
	if err == nil && (l.action == badgeSVG || l.action == badgeJSON) {
		return s.badge(w, r, l)
	}
	if err == nil && l.action == trendSVG {
		return s.trend(w, r, l)
	}
	if err != nil {
		return err
	}
	rep, err := s.newest(r, l)
	if err != nil {
		return err
	}
	base := s.dashboardBase(r)
	target := base + "/#/reports/" + strconv.FormatInt(rep.ID, 10)
	switch {
	case l.action == "site":
		if target, err = s.siteTarget(&rep); err != nil {
			return err
		}
	case l.action != "":
		target = base + "/api/reports/" + strconv.FormatInt(rep.ID, 10) + "/" + l.action
		if l.action == "pdf" {
			q := r.URL.Query()
			if q.Has("waitForExpression") {
				// A stable link is handed around: it must not carry the
				// JavaScript of whoever made it into every reader's PDF.
				return report.Errorf(report.Validation, "waitForExpression is not taken by stable links: ask /api/reports/%d/pdf for it, with a token of scope upload where tokens are in use", rep.ID)
			}
			target += forwardQuery(q)
		}
	}
	h := w.Header()
	h.Set("Location", target)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Report-Id", strconv.FormatInt(rep.ID, 10))
	w.WriteHeader(http.StatusFound)
	return nil
}

// siteTarget is where /latest/site sends the client: the newest report's
// siteUrl (a site, or an html file offered on the content origin).
func (s *Server) siteTarget(rep *report.Report) (string, error) {
	s.withSiteURL(rep)
	switch {
	case rep.SiteURL != "":
		return rep.SiteURL, nil
	case s.cfg.ContentURL == nil:
		return "", report.Errorf(report.NotFound, "report %d: no content origin is configured (content.url), so /latest/site has nowhere to send you; use /latest or /latest/download", rep.ID)
	}
	return "", report.Errorf(report.NotFound, "report %d, the newest match, is a %s file: only sites and html reports open on the content origin (use /latest/preview or /latest/pdf)", rep.ID, rep.FileType)
}

// forwardQuery is the query without the link's own parameters, for the
// PDF's print options (?paper=, ?landscape=, …).
func forwardQuery(q url.Values) string {
	q.Del("name")
	q.Del("type")
	q.Del("branch")
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
