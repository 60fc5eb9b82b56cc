package report

// History limits (GET /api/projects/{id}/history).
const (
	HistoryDefaultLimit = 100
	HistoryMaxLimit     = 1000
)

// HistoryQuery selects a report identity's history: the newest Limit
// reports of Project named Name, of Type when it is non-nil, on Branch
// when it is non-nil (a Branch of "" matches reports without one), with
// an id below Before when it is non-zero; returned oldest first.
type HistoryQuery struct {
	Project int64
	Name    string
	Type    *FileType
	Branch  *string
	Before  int64
	Limit   int
	// Flaky asks for each point's Flaky list (report.MarkFlaky): it reads
	// every point's per-test results, so it is asked for (?flaky=true, the
	// dashboard's chart, reportctl history), never the default, which
	// stays one index range.
	Flaky bool
}
