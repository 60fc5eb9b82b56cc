package report

import (
	"fmt"
	"strings"
)

// Drift is one place where derived metadata (counters, indexes) disagrees
// with the rows it is derived from, as `reportd check` finds it in either
// store (boltstore.Drift, pgstore.Drift).
type Drift struct {
	// "reportCount", "dayCount", "index-missing", "index-dangling",
	// "report-without-project", "results-dangling" (bbolt: per-test results
	// of a report row that is gone; PostgreSQL's foreign key rules them
	// out), and for each latest index of bbolt (latest_by.go:
	// "latest", "latest-name", "latest-branch") "<index>-missing" and
	// "<index>-dangling".
	What    string
	Project int64
	Report  int64
	Day     string // YYYYMMDD for dayCount
	Stored  int64
	Actual  int64
}

func (d Drift) String() string {
	switch d.What {
	case "reportCount":
		return fmt.Sprintf("project %d: reportCount is %d, real count %d", d.Project, d.Stored, d.Actual)
	case "dayCount":
		return fmt.Sprintf("project %d: %d reports counted on %s, real count %d", d.Project, d.Stored, d.Day, d.Actual)
	case "index-missing":
		return fmt.Sprintf("project %d: report %d is missing from the project index", d.Project, d.Report)
	case "index-dangling":
		return fmt.Sprintf("project %d: index entry for report %d, which is not the project's", d.Project, d.Report)
	case "report-without-project":
		return fmt.Sprintf("report %d: its project %d does not exist", d.Report, d.Project)
	case "results-dangling":
		return fmt.Sprintf("report %d: per-test results kept for a report that does not exist", d.Report)
	}
	if ix, ok := strings.CutSuffix(d.What, "-missing"); ok {
		return fmt.Sprintf("project %d: report %d is missing from the %s index", d.Project, d.Report, ix)
	}
	if ix, ok := strings.CutSuffix(d.What, "-dangling"); ok {
		return fmt.Sprintf("project %d: %s index entry for report %d does not match its row", d.Project, ix, d.Report)
	}
	return d.What
}
