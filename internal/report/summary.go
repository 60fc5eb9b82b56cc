package report

// Summary is a report's headline figures, as far as they are known: the
// line coverage in percent and the test counts. A nil field is unknown.
// Flaky is how many tests the generator marked flaky (Playwright: failed,
// then passed on a retry; Allure 3: marked flaky from its history); they
// are also counted in Passed or Failed by how they ended, never apart.
// It is filled at upload from the file's text (internal/detect) and shown
// in the report JSON and in badges.
type Summary struct {
	Lines   *float64 `json:"lines,omitempty"` // line coverage, percent (0–100)
	Passed  *int64   `json:"passed,omitempty"`
	Failed  *int64   `json:"failed,omitempty"`
	Skipped *int64   `json:"skipped,omitempty"`
	Flaky   *int64   `json:"flaky,omitempty"`
}

// Empty reports whether no figure is known.
func (s *Summary) Empty() bool {
	return s == nil || (s.Lines == nil && s.Passed == nil && s.Failed == nil && s.Skipped == nil && s.Flaky == nil)
}

// LatestQuery selects the newest report (highest id) of a project. A nil
// Name, Type or Branch matches any; a Branch of "" matches reports without
// one. A report's identity is its name and type (+ branch): Type narrows
// a name to one of the reports sharing it (deck.pdf and deck.pptx are
// both "deck"); it is only looked at together with Name.
type LatestQuery struct {
	Project int64
	Name    *string
	Type    *FileType
	Branch  *string
}

// MayHaveTests reports whether a report with summary s may have per-test
// results: its summary counts tests, or is unknown (a site whose tests
// are only in JUnit XML has results and no summary).
func MayHaveTests(s *Summary) bool {
	return s.Empty() || s.Passed != nil || s.Failed != nil || s.Skipped != nil || s.Flaky != nil
}
