package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/reportd/reportd/internal/badge"
	"github.com/reportd/reportd/internal/report"
)

// trendPoints is how many of the newest builds a trend sparkline shows.
const trendPoints = 30

// trendMetrics are the figures /trend.svg?metric= draws; lines is the default.
var trendMetrics = map[string]string{"lines": "line coverage", "passed": "tests passed", "failed": "tests failed", "duration": "test duration"}

// trend answers /p/{project}/{name}/trend.svg: a sparkline of the name's
// newest trendPoints builds (?branch=, ?type= narrow them as for badges),
// oldest left, of ?metric= lines (default), passed, failed or duration
// (the sum of the per-test durations, where per-test results exist).
// Builds without the figure are left out. Like a badge: 200 with an
// empty grey sparkline when there is no report (or the link names none),
// a 404 error body for a project that does not exist, an "invalid link"
// sparkline for a name or branch no report can have, the badges' cache
// rules.
func (s *Server) trend(w http.ResponseWriter, r *http.Request, l link) error {
	metric := r.URL.Query().Get("metric")
	if metric == "" {
		metric = "lines"
	}
	what, ok := trendMetrics[metric]
	if !ok {
		return report.Errorf(report.Validation, "metric=%s: want lines, passed, failed or duration", metric)
	}
	t, err := s.trendFor(r, l, metric, what)
	if err != nil {
		return err
	}
	s.writeBadge(w, r, t.SVG(), "image/svg+xml; charset=utf-8")
	return nil
}

func (s *Server) trendFor(r *http.Request, l link, metric, what string) (badge.Trend, error) {
	t := badge.Trend{Title: what + ": no report", Desc: "No report to draw a trend of."}
	if l.name == nil {
		t.Desc = "The link names no report: /p/{project}/{name}/trend.svg."
		return t, nil
	}
	id, err := s.linkProject(r, l)
	if report.IsKind(err, report.Validation) {
		return t, nil
	}
	if err != nil {
		return t, err
	}
	pts, err := s.svc.History(r.Context(), report.HistoryQuery{Project: id, Name: *l.name, Type: l.typ, Branch: l.branch, Limit: trendPoints})
	if report.IsKind(err, report.Validation) { // a name or branch no report can have: as badges do
		t.Title, t.Desc = what+": invalid link", "The link names no report a trend can be drawn of: "+report.MessageOf(err)+"."
		return t, nil
	}
	if err != nil {
		return t, err
	}
	unit, read := "", 0
	for _, p := range pts {
		var v *float64
		switch sum := p.Summary; {
		case metric == "duration" && (!report.MayHaveTests(sum) || read >= report.ResultsReadBudget):
		case metric == "duration":
			res, err := s.svc.Results(r.Context(), p.ReportID)
			if err != nil && !report.IsKind(err, report.NotFound) {
				return t, err
			}
			if !res.Empty() && len(res.Tests) > 0 {
				read += len(res.Tests)
				d := float64(res.DurationMs()) / 1000
				v, unit = &d, " s"
			}
		case sum == nil:
		case metric == "lines":
			v, unit = sum.Lines, "%"
		case metric == "passed" && sum.Passed != nil:
			f := float64(*sum.Passed)
			v = &f
		case metric == "failed" && sum.Failed != nil:
			f := float64(*sum.Failed)
			v = &f
		}
		if v != nil {
			t.Values = append(t.Values, *v)
		}
	}
	label := *l.name
	if l.branch != nil && *l.branch != "" {
		label += " on " + *l.branch
	}
	if n := len(t.Values); n > 0 {
		first, last := t.Values[0], t.Values[n-1]
		t.Title = fmt.Sprintf("%s of %s: %s%s", what, label, strconv.FormatFloat(last, 'f', -1, 64), unit)
		t.Desc = fmt.Sprintf("%s over the last %d builds of %s, from %s%s to %s%s.", what, n, label,
			strconv.FormatFloat(first, 'f', -1, 64), unit, strconv.FormatFloat(last, 'f', -1, 64), unit)
		if metric == "failed" {
			t.Color = "red"
		}
	} else {
		t.Title = fmt.Sprintf("%s of %s: no data", what, label)
		t.Desc = fmt.Sprintf("No build of %s has its %s.", label, what)
	}
	return t, nil
}
