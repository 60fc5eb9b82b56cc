package httpapi

import (
	"net/http"
	"regexp"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/web/trendchart"
)

// chartID is what ?chartId= may be: it prefixes the ids inside the SVG,
// which the dashboard inlines several times on one page.
var chartID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,39}$`)

// historyChart is GET /api/projects/{id}/history?format=svg: the history
// drawn as the dashboard's trend chart (web/trendchart): stacked test
// bars, a coverage line, a link per build.
func (s *Server) historyChart(w http.ResponseWriter, r *http.Request, hq report.HistoryQuery) error {
	id := r.URL.Query().Get("chartId")
	if id == "" {
		id = "trend"
	} else if !chartID.MatchString(id) {
		return report.Errorf(report.Validation, "chartId must be a letter then up to 39 letters, digits or -, got %q", id)
	}
	hq.Flaky = true // a build's label names the tests marked flaky there
	pts, err := s.svc.History(r.Context(), hq)
	if err != nil {
		return err
	}
	title := hq.Name
	if hq.Branch != nil && *hq.Branch != "" {
		title += " on " + *hq.Branch
	}
	w.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	// Opened on its own it runs nothing, as a badge (badge.go).
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.WriteHeader(http.StatusOK)
	w.Write(trendchart.Render(pts, trendchart.Options{ID: id, Title: "Trend of " + title}))
	return nil
}
