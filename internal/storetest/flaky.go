package storetest

import (
	"encoding/json"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// flakyRoundTrip: the summary's flaky count is stored with the row and
// read back exactly by every read (one report, the list, an update, the
// latest), a known zero as zero; a summary of nothing but a flaky count
// is still a summary, and a record without one reads back without it.
func flakyRoundTrip(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	want := map[int64]*report.Summary{}
	for _, sum := range []*report.Summary{
		{Passed: ptr[int64](4), Failed: ptr[int64](2), Skipped: ptr[int64](1), Flaky: ptr[int64](1)},
		{Passed: ptr[int64](7), Failed: ptr[int64](0), Skipped: ptr[int64](0), Flaky: ptr[int64](0)},
		{Flaky: ptr[int64](3)},
		{Passed: ptr[int64](5)},
	} {
		id, err := s.NextReportID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec := record(id, a.ID, c.NowLocal())
		rec.Generator, rec.Summary = "playwright", sum
		if _, err := s.CreateReport(ctx, rec); err != nil {
			t.Fatal(err)
		}
		want[id] = sum
	}
	check := func(how string, r report.ReportRecord) {
		t.Helper()
		w, ok := want[r.ID]
		if !ok {
			t.Fatalf("%s: unexpected report %d", how, r.ID)
		}
		gb, _ := json.Marshal(r.Summary)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s: report %d summary %s, want %s", how, r.ID, gb, wb)
		}
	}
	for id := range want {
		got, err := s.Report(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		check("report", got)
	}
	list, err := s.Reports(ctx, &a.ID)
	if err != nil || len(list) != len(want) {
		t.Fatalf("list: %d %v", len(list), err)
	}
	for _, r := range list {
		check("list", r)
	}
	var first int64
	for id := range want {
		if first == 0 || id < first {
			first = id
		}
	}
	up, err := s.UpdateReport(ctx, first, report.ReportChange{FileName: ptr("renamed.md")})
	if err != nil {
		t.Fatal(err)
	}
	check("update", up)
	l, err := s.Latest(ctx, report.LatestQuery{Project: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	check("latest", l)
}
