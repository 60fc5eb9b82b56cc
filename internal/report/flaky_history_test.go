package report

import (
	"reflect"
	"testing"
)

// TestMarkFlaky: each point is judged over the points up to it only: the
// last FlakyWindow of its branch and those of its commit; points without
// results are left alone.
func TestMarkFlaky(t *testing.T) {
	str := func(s string) *string { return &s }
	run := func(status string) *Results {
		return &Results{Tests: []TestResult{{ID: "t", Title: "T", Status: status}, {ID: "s", Title: "S", Status: TestPassed}}}
	}
	pts := []HistoryPoint{
		{ReportID: 1, Branch: str("main"), Commit: str("a")},
		{ReportID: 2, Branch: str("main"), Commit: str("b")},
		{ReportID: 3, Branch: str("dev"), Commit: str("c")},
		{ReportID: 4, Branch: str("main"), Commit: str("d")},
		{ReportID: 5, Branch: str("dev"), Commit: str("c")},
		{ReportID: 6, Branch: str("dev"), Commit: str("e")},
	}
	res := []*Results{run(TestPassed), run(TestFailed), run(TestPassed), run(TestPassed), run(TestFailed), nil}
	MarkFlaky(pts, res)
	want := map[int64][]TestRef{
		4: {{ID: "t", Title: "T"}}, // passed, failed, passed on main: two changes
		5: {{ID: "t", Title: "T"}}, // passed and failed on commit c
	}
	for _, p := range pts {
		if !reflect.DeepEqual(p.Flaky, want[p.ReportID]) {
			t.Errorf("point %d: flaky %v, want %v", p.ReportID, p.Flaky, want[p.ReportID])
		}
	}
	// Beyond the window the old changes no longer count.
	pts, res = nil, nil
	for i, st := range []string{TestPassed, TestFailed, TestPassed} {
		pts = append(pts, HistoryPoint{ReportID: int64(i + 1), Branch: str("main")})
		res = append(res, run(st))
	}
	for i := 0; i < FlakyWindow-1; i++ {
		pts = append(pts, HistoryPoint{ReportID: int64(len(pts) + 1), Branch: str("main")})
		res = append(res, run(TestPassed))
	}
	MarkFlaky(pts, res)
	if pts[2].Flaky == nil || pts[len(pts)-3].Flaky == nil || pts[len(pts)-2].Flaky != nil { // the 10th point still sees the first
		t.Errorf("window: %+v", pts)
	}
}
