package pgstore_test

import (
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// TestHistoryUsesIndex: every form of History reads one range of the
// index led by its columns, in order (no sort, no scan of the table),
// when more reports match than the limit; when fewer do (500 here, limit
// 1000) the planner may fetch them all through the same index and sort
// them, which reads no more rows.
func TestHistoryUsesIndex(t *testing.T) {
	s := open(t, testserver.DSN(t), report.Clock{})
	defer s.Close()
	seedPlanReports(t, s)
	main, md := "main", report.MD
	for _, c := range []struct {
		q     report.HistoryQuery
		index string
	}{
		{report.HistoryQuery{Project: 1, Name: "coverage", Limit: 1000}, "reports_latest_name"},
		{report.HistoryQuery{Project: 1, Name: "coverage", Branch: &main, Limit: 100}, "reports_latest"},
		{report.HistoryQuery{Project: 1, Name: "coverage", Branch: &main, Limit: 1000}, "reports_latest"},
		{report.HistoryQuery{Project: 1, Name: "coverage", Type: &md, Limit: 10}, "reports_latest_name_type"},
		{report.HistoryQuery{Project: 1, Name: "coverage", Type: &md, Branch: &main, Before: 5000, Limit: 10}, "reports_latest_name_type_branch"},
	} {
		query, args := pgstore.HistorySQL(c.q)
		text := explain(t, s.Pool(), "EXPLAIN "+query, args...)
		fewer := c.q.Branch != nil && c.q.Type == nil && c.q.Limit > 500
		if !strings.Contains(text, "Index Scan") || !strings.Contains(text, " "+c.index+" ") || (!fewer && strings.Contains(text, "Sort")) || strings.Contains(text, "Seq Scan") {
			t.Errorf("History %+v: the plan does not read %s alone:\n%s", c.q, c.index, text)
		}
	}
}
