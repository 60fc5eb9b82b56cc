package httpapi

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/reportd/reportd/internal/report"
)

// history is GET /api/projects/{id}/history?name=&type=&branch=&limit=:
// {id} is a project id or slug (or a name one project has), as stable
// links take it; a project-limited token is checked once it is resolved.
func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	hq, err := s.historyQuery(r)
	if err != nil {
		return err
	}
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
	case "svg":
		return s.historyChart(w, r, hq) // history_chart.go
	default:
		return report.Errorf(report.Validation, "format=%s: want json or svg", f)
	}
	pts, err := s.svc.History(r.Context(), hq)
	if err == nil {
		writeJSON(w, http.StatusOK, pts)
	}
	return err
}

// historyQuery reads history's {id} and query.
func (s *Server) historyQuery(r *http.Request) (report.HistoryQuery, error) {
	id, err := s.linkProject(r, link{project: r.PathValue("id")})
	if err != nil {
		return report.HistoryQuery{}, err
	}
	q := r.URL.Query()
	hq := report.HistoryQuery{Project: id, Name: q.Get("name")}
	if v := q.Get("type"); v != "" {
		t := report.FileType(v)
		if !slices.Contains(report.FileTypes, t) {
			return hq, report.Errorf(report.Validation, "type=%s is not a report type: want one of html, md, pdf, ppt, pptx", v)
		}
		hq.Type = &t
	}
	if q.Has("branch") {
		v := q.Get("branch")
		hq.Branch = &v
	}
	if v := q.Get("flaky"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return hq, report.Errorf(report.Validation, "flaky must be true or false, got %q", v)
		}
		hq.Flaky = b
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return hq, report.Errorf(report.Validation, "limit must be a whole number between 1 and %d, got %q", report.HistoryMaxLimit, v)
		}
		hq.Limit = n
	}
	return hq, nil
}

// compare is GET /api/reports/{id}/compare?base=previous|{reportId}|branch:{name}.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := s.svc.Compare(r.Context(), id, r.URL.Query().Get("base"))
	if err == nil {
		writeJSON(w, http.StatusOK, c)
	}
	return err
}
