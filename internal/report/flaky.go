package report

// FlakyWindow is how many of a branch's newest runs the flaky rule looks
// at (docs/api.md, "Flaky tests").
const FlakyWindow = 10

// SameCommitScan bounds how many runs up to a point (a comparison: of the
// identity's newest reports; a history: of its own points) are looked at
// for runs of the point's commit.
const SameCommitScan = 50

// ResultsReadBudget bounds how many tests' results one history or trend
// answer reads: newest points first, the older ones past it are left
// unmarked (a 20,000-test suite: its newest 25 points).
const ResultsReadBudget = 500_000

// FlakyTests applies the flaky rule to the tests of head: a test is flaky
// when its generator marked it so (it passed on a retry), when it both
// passed and failed among the runs of the same commit (sameCommit, head's
// own included), or when its status changed at least twice within window
// (the branch's last FlakyWindow runs, oldest first, head last). Skipped
// runs of a test do not count as a status change. The result lists head's
// flaky tests in head's order.
func FlakyTests(head *Results, sameCommit, window []*Results) []TestRef {
	out := []TestRef{}
	if head == nil {
		return out
	}
	passed, failed := map[string]bool{}, map[string]bool{}
	for _, r := range sameCommit {
		if r == nil {
			continue
		}
		for _, t := range r.Tests {
			switch t.Status {
			case TestPassed:
				passed[t.ID] = true
			case TestFailed:
				failed[t.ID] = true
			}
		}
	}
	last, changes := map[string]string{}, map[string]int{}
	for _, r := range window {
		if r == nil {
			continue
		}
		for _, t := range r.Tests {
			if t.Status != TestPassed && t.Status != TestFailed {
				continue
			}
			if prev, ok := last[t.ID]; ok && prev != t.Status {
				changes[t.ID]++
			}
			last[t.ID] = t.Status
		}
	}
	for _, t := range head.Tests {
		if t.Flaky || (passed[t.ID] && failed[t.ID]) || changes[t.ID] >= 2 {
			out = append(out, TestRef{ID: t.ID, Title: t.Title})
		}
	}
	return out
}

// MarkFlaky sets each history point's Flaky: the flaky rule of FlakyTests
// applied to results[i] (the point's per-test results, nil when it has
// none) over the points of the same history only, so that a history costs
// no more reads than its own points: the window is the last FlakyWindow
// points of the point's branch up to it, the same-commit runs are the
// points up to it with its commit. The oldest points of a history see
// fewer earlier runs than a comparison would. points is oldest first.
func MarkFlaky(points []HistoryPoint, results []*Results) {
	for i := range points {
		if i >= len(results) || results[i] == nil || len(results[i].Tests) == 0 {
			continue
		}
		var window, same []*Results
		for j := i; j >= 0 && i-j < SameCommitScan; j-- {
			if len(window) < FlakyWindow && sameString(points[j].Branch, points[i].Branch) {
				window = append(window, results[j])
			}
			if points[i].Commit != nil && points[j].Commit != nil && *points[j].Commit == *points[i].Commit {
				same = append(same, results[j])
			}
		}
		for l, r := 0, len(window)-1; l < r; l, r = l+1, r-1 { // oldest first
			window[l], window[r] = window[r], window[l]
		}
		if f := FlakyTests(results[i], same, window); len(f) > 0 {
			points[i].Flaky = f
		}
	}
}

// sameString reports whether a and b name the same branch (nil and "" alike).
func sameString(a, b *string) bool {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return s(a) == s(b)
}
