package report

// FlakyWindow is how many of a branch's newest runs the flaky rule looks
// at (docs/api.md, "Flaky tests").
const FlakyWindow = 10

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
