package report

// The shapes of a report identity's history and of a comparison between
// two reports (GET /api/projects/{id}/history, GET /api/reports/{id}/compare),
// shared by the daemon, the client and reportctl's pull-request feedback.

// Test statuses of TestResult.Status.
const (
	TestPassed  = "passed"
	TestFailed  = "failed"
	TestSkipped = "skipped"
)

// TestResult is one test of a report, as its generator listed it. ID is
// stable across builds (the generator's own id, else file + title path);
// Flaky says the generator itself marked it flaky (it passed on a retry).
type TestResult struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Status     string `json:"status"`
	DurationMs int64  `json:"durationMs"`
	Flaky      bool   `json:"flaky,omitempty"`
}

// FileCoverage is one source file's line coverage in percent (0–100).
type FileCoverage struct {
	Path  string  `json:"path"`
	Lines float64 `json:"lines"`
}

// Results is what a report says test by test and file by file, stored
// compactly beside its row. Truncated says the generator listed more than
// the cap and only the first were kept.
type Results struct {
	Tests     []TestResult   `json:"tests,omitempty"`
	Files     []FileCoverage `json:"files,omitempty"`
	Truncated bool           `json:"truncated,omitempty"`
}

// HistoryPoint is one report in a history, and one side of a comparison.
// Flaky lists, in a history only, the report's tests the flaky rule marks
// at that point (MarkFlaky); empty when none.
type HistoryPoint struct {
	ReportID   int64     `json:"reportId"`
	UploadTime LocalTime `json:"uploadTime"`
	Branch     *string   `json:"branch"`
	Commit     *string   `json:"commit"`
	BuildURL   *string   `json:"buildUrl"`
	Summary    *Summary  `json:"summary"`
	Flaky      []TestRef `json:"flaky,omitempty"`
}

// TestRef names a test in a comparison's lists.
type TestRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// FileDelta is a file whose line coverage dropped between base and head.
type FileDelta struct {
	Path   string  `json:"path"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// Comparison is GET /api/reports/{id}/compare. Base and Delta are nil
// when there is no base; Delta holds head − base for each Summary field
// known on both sides.
type Comparison struct {
	Base         *HistoryPoint `json:"base"`
	Head         HistoryPoint  `json:"head"`
	Delta        *Summary      `json:"delta"`
	NewFailures  []TestRef     `json:"newFailures"`
	Fixed        []TestRef     `json:"fixed"`
	StillFailing []TestRef     `json:"stillFailing"`
	Flaky        []TestRef     `json:"flaky"`
	Files        []FileDelta   `json:"files"`
}
