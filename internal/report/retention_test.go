package report

import (
	"slices"
	"testing"
	"time"
)

func TestPlanRetention(t *testing.T) {
	now := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	day := func(n int) LocalTime { return LocalTime{Time: now.AddDate(0, 0, -n)} }
	br := func(s string) *string { return &s }
	rec := func(id int64, name string, branch *string, ageDays int) ReportRecord {
		return ReportRecord{Report: Report{ID: id, ProjectID: 1, FileName: name + ".html", Name: name, Branch: branch, UploadTime: day(ageDays)}, Size: id * 10}
	}
	main, dev := br("main"), br("dev")
	// Five "cov" on main (ids 1..5, oldest first), two on dev, one
	// without a branch, two "lint" on main.
	reps := []ReportRecord{
		rec(1, "cov", main, 50), rec(2, "cov", main, 40), rec(3, "cov", dev, 35),
		rec(4, "cov", main, 30), rec(5, "lint", main, 25), rec(6, "cov", nil, 100),
		rec(7, "cov", main, 10), rec(8, "cov", dev, 5), rec(9, "lint", main, 2), rec(10, "cov", main, 1),
	}
	tests := []struct {
		name string
		p    Policy
		want map[int64]string // id -> reason
	}{
		{"no policy", Policy{KeepNewestPerBranch: true}, nil},
		{"keep last 2", Policy{KeepLast: 2, KeepNewestPerBranch: true},
			map[int64]string{1: ReasonKeepLast, 2: ReasonKeepLast, 4: ReasonKeepLast}},
		{"keep last 1", Policy{KeepLast: 1, KeepNewestPerBranch: false},
			map[int64]string{1: ReasonKeepLast, 2: ReasonKeepLast, 3: ReasonKeepLast, 4: ReasonKeepLast, 5: ReasonKeepLast, 7: ReasonKeepLast}},
		{"keep last larger than any group", Policy{KeepLast: 100, KeepNewestPerBranch: true}, nil},
		{"max age keeps each group's newest", Policy{MaxAgeDays: 20, KeepNewestPerBranch: true},
			map[int64]string{1: ReasonMaxAge, 2: ReasonMaxAge, 3: ReasonMaxAge, 4: ReasonMaxAge, 5: ReasonMaxAge}},
		{"max age without keeping the newest", Policy{MaxAgeDays: 20},
			map[int64]string{1: ReasonMaxAge, 2: ReasonMaxAge, 3: ReasonMaxAge, 4: ReasonMaxAge, 5: ReasonMaxAge, 6: ReasonMaxAge}},
		{"max age at the boundary keeps the report", Policy{MaxAgeDays: 30},
			map[int64]string{1: ReasonMaxAge, 2: ReasonMaxAge, 3: ReasonMaxAge, 6: ReasonMaxAge}},
		{"both rules: count first", Policy{KeepLast: 3, MaxAgeDays: 45, KeepNewestPerBranch: true},
			map[int64]string{1: ReasonKeepLast, 2: ReasonKeepLast}},
		{"both rules: age removes within the count", Policy{KeepLast: 4, MaxAgeDays: 8, KeepNewestPerBranch: true},
			map[int64]string{1: ReasonKeepLast, 2: ReasonMaxAge, 3: ReasonMaxAge, 4: ReasonMaxAge, 5: ReasonMaxAge, 7: ReasonMaxAge}},
		{"everything old goes when nothing is kept", Policy{MaxAgeDays: 1},
			map[int64]string{1: ReasonMaxAge, 2: ReasonMaxAge, 3: ReasonMaxAge, 4: ReasonMaxAge, 5: ReasonMaxAge, 6: ReasonMaxAge, 7: ReasonMaxAge, 8: ReasonMaxAge, 9: ReasonMaxAge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanRetention(reps, tt.p, now)
			if len(got) != len(tt.want) {
				t.Fatalf("removes %v, want %v", ids(got), tt.want)
			}
			for i, it := range got {
				if i > 0 && got[i-1].ID >= it.ID {
					t.Fatalf("not by id ascending: %v", ids(got))
				}
				if tt.want[it.ID] != it.Reason {
					t.Errorf("report %d: reason %q, want %q (plan %v)", it.ID, it.Reason, tt.want[it.ID], ids(got))
				}
				if it.Size != it.ID*10 || it.FileName == "" || it.ProjectID != 1 {
					t.Errorf("item %+v does not carry the report's fields", it)
				}
			}
		})
	}
}

// TestPlanRetentionKeepsLatest: whatever the policy, with
// KeepNewestPerBranch every group's highest id stays, in any input order.
func TestPlanRetentionKeepsLatest(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var reps []ReportRecord
	for i := int64(1); i <= 200; i++ {
		b := []string{"main", "dev", "feat"}[i%3]
		name := []string{"a", "b"}[i%2]
		reps = append(reps, ReportRecord{Report: Report{ID: i, FileName: name + ".md", Branch: &b,
			UploadTime: LocalTime{Time: now.AddDate(0, 0, -int(300-i))}}})
	}
	slices.Reverse(reps)
	for _, p := range []Policy{{KeepLast: 1}, {MaxAgeDays: 1}, {KeepLast: 5, MaxAgeDays: 30}} {
		p.KeepNewestPerBranch = true
		gone := map[int64]bool{}
		for _, it := range PlanRetention(reps, p, now) {
			gone[it.ID] = true
		}
		newest := map[string]int64{}
		for _, r := range reps {
			k := r.Name + "|" + NameFromFile(r.FileName) + "|" + *r.Branch
			newest[k] = max(newest[k], r.ID)
		}
		if len(newest) != 6 {
			t.Fatalf("groups %v", newest)
		}
		for k, id := range newest {
			if gone[id] {
				t.Errorf("policy %+v removes %d, the newest of %s", p, id, k)
			}
		}
		if p.KeepLast == 1 && len(gone) != 200-6 {
			t.Errorf("keep last 1 removes %d, want %d", len(gone), 194)
		}
	}
}

func TestRetentionOverAndCheck(t *testing.T) {
	n := func(v int) *int { return &v }
	f := false
	def := Policy{KeepLast: 10, MaxAgeDays: 90, KeepNewestPerBranch: true}
	if got := (Retention{}).Over(def); got != def {
		t.Errorf("empty override: %+v", got)
	}
	got := Retention{KeepLast: n(0), KeepNewestPerBranch: &f}.Over(def)
	if want := (Policy{KeepLast: 0, MaxAgeDays: 90}); got != want {
		t.Errorf("override: %+v, want %+v", got, want)
	}
	for _, bad := range []Retention{{KeepLast: n(-1)}, {MaxAgeDays: n(-1)}, {KeepLast: n(MaxKeepLast + 1)}, {MaxAgeDays: n(MaxMaxAgeDays + 1)}} {
		if err := bad.Check(); !IsKind(err, Validation) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := (Retention{KeepLast: n(0), MaxAgeDays: n(MaxMaxAgeDays)}).Check(); err != nil {
		t.Error(err)
	}
}

func TestParseAgeDays(t *testing.T) {
	good := map[string]int{"0": 0, "0d": 0, "0s": 0, "90d": 90, "90D": 90, " 2w ": 14, "720h": 30, "24h0m": 1}
	for in, want := range good {
		if got, err := ParseAgeDays(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "1.5d", "36h", "90", "1y", "100000d", "abc"} {
		if _, err := ParseAgeDays(in); !IsKind(err, Validation) {
			t.Errorf("%q: %v, want a ValidationError", in, err)
		}
	}
	if FormatAgeDays(0) != "0" || FormatAgeDays(90) != "90d" {
		t.Error("FormatAgeDays")
	}
}

func ids(items []PruneItem) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestPlanRetentionGroupsByType: deck.pptx and deck.pdf share the name
// "deck" but are two reports; keep last 1 keeps the newest of each.
func TestPlanRetentionGroupsByType(t *testing.T) {
	now := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	rec := func(id int64, typ FileType) ReportRecord {
		return ReportRecord{Report: Report{ID: id, ProjectID: 1, FileName: "deck." + string(typ), FileType: typ, Name: "deck", UploadTime: LocalTime{Time: now}}}
	}
	reps := []ReportRecord{rec(1, PPTX), rec(2, PDF), rec(3, PPTX), rec(4, PDF), rec(5, MD)}
	got := PlanRetention(reps, Policy{KeepLast: 1}, now)
	if !slices.Equal(ids(got), []int64{1, 2}) {
		t.Fatalf("keep last 1 removes %v, want [1 2]", ids(got))
	}
	if got[0].FileType != PPTX || got[1].FileType != PDF {
		t.Fatalf("items carry types %q %q", got[0].FileType, got[1].FileType)
	}
}
