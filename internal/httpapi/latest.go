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
//
// {project} is an id, or a name that exactly one project has. Actions are
// reserved words; a report whose name is one is reached with ?name=.
// ?branch= narrows to one branch (empty: any).

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
)

// link is a parsed /p/ path.
type link struct {
	project string // the reference as given
	name    *string
	branch  *string
	action  string // "", pdf, download, preview, site, badge.svg, badge.json
}

// parseLink reads /p/{project}/... into a link. A malformed link is an
// error (an error body, for badges too); a well-formed one may still name
// nothing. An escaped "/" (%2F) in a segment is refused, as everywhere in
// the API, since proxies and routers disagree on it: a report name with a
// slash is reached with ?name=, a project with one by its id.
func parseLink(r *http.Request) (link, error) {
	rest, _ := strings.CutPrefix(r.URL.EscapedPath(), "/p/")
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	for i, s := range segs {
		if strings.Contains(strings.ToUpper(s), "%2F") {
			return link{}, report.Errorf(report.Validation, "an escaped / in %q: give a report name with / as ?name=, a project by its id", s)
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
	isBadge := func(s string) bool { return s == badgeSVG || s == badgeJSON }
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
	if v := q.Get("branch"); v != "" {
		l.branch = &v
	}
	return l, nil
}

// newest resolves l to its newest report.
func (s *Server) newest(r *http.Request, l link) (report.Report, error) {
	id, err := s.svc.ResolveProject(r.Context(), l.project, s.visible(r))
	if err != nil {
		return report.Report{}, err
	}
	// {project} may be a name: a project-limited token is checked here,
	// once it is known which project the link means (where reads need a
	// token at all: a token never narrows open reads).
	if s.cfg.AuthReads {
		if err := s.permitProject(r, id, "reading a project's reports"); err != nil {
			return report.Report{}, err
		}
	}
	return s.svc.Latest(r.Context(), report.LatestQuery{Project: id, Name: l.name, Branch: l.branch})
}

// stable answers every GET under /p/.
func (s *Server) stable(w http.ResponseWriter, r *http.Request) error {
	l, err := parseLink(r)
	if err == nil && (l.action == badgeSVG || l.action == badgeJSON) {
		return s.badge(w, r, l)
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
	q.Del("branch")
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
