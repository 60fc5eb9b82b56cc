package storetest

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// buildMeta: the build metadata is stored with the row, read back by
// Report and Reports, set and cleared by UpdateReport; a row without a
// name gets the one derived from its file name.
func buildMeta(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	id, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(id, a.ID, c.NowLocal())
	rec.Name, rec.Branch, rec.Commit = "coverage", ptr("feature/x"), ptr("3f2c9a1e")
	rec.BuildURL, rec.BuildID = ptr("https://ci.example.com/b/7"), ptr("7")
	if _, err := s.CreateReport(ctx, rec); err != nil {
		t.Fatal(err)
	}
	plain := mustReport(t, s, c, a.ID, c.NowLocal())
	if plain.Name != report.NameFromFile(plain.FileName) || plain.Branch != nil || plain.Commit != nil || plain.BuildURL != nil || plain.BuildID != nil {
		t.Fatalf("a report without metadata: %+v", plain)
	}
	got, err := s.Report(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := func(r report.ReportRecord, name, branch, commit, url, build string) {
		t.Helper()
		if r.Name != name || str(r.Branch) != branch || str(r.Commit) != commit || str(r.BuildURL) != url || str(r.BuildID) != build {
			t.Fatalf("metadata %q %q %q %q %q, want %q %q %q %q %q", r.Name, str(r.Branch), str(r.Commit), str(r.BuildURL), str(r.BuildID),
				name, branch, commit, url, build)
		}
	}
	want(got, "coverage", "feature/x", "3f2c9a1e", "https://ci.example.com/b/7", "7")
	list, err := s.Reports(ctx, &a.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d %v", len(list), err)
	}
	want(list[0], "coverage", "feature/x", "3f2c9a1e", "https://ci.example.com/b/7", "7")

	// Set one, clear others, keep the rest; a cleared name is derived again.
	up, err := s.UpdateReport(ctx, id, report.ReportChange{Meta: report.BuildMeta{Branch: ptr("main"), Commit: ptr(""), Name: ptr("")}})
	if err != nil {
		t.Fatal(err)
	}
	want(up, report.NameFromFile(rec.FileName), "main", "", "https://ci.example.com/b/7", "7")
	again, _ := s.Report(ctx, id)
	want(again, report.NameFromFile(rec.FileName), "main", "", "https://ci.example.com/b/7", "7")
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// latest: the newest report per (project, name, branch) follows creates,
// deletes, renames and branch changes, and a deleted project takes its
// entries with it.
func latest(t *testing.T, s report.MetaStore, c report.Clock) {
	a, b := mustProject(t, s, c, "a"), mustProject(t, s, c, "b")
	add := func(p int64, name, branch string) int64 { t.Helper(); return addNamed(t, s, c, p, name, branch) }
	want := func(p int64, name, branch string, id int64) {
		t.Helper()
		got, err := s.Latest(ctx, report.LatestQuery{Project: p, Name: &name, Branch: &branch})
		switch {
		case id == 0 && !report.IsKind(err, report.NotFound):
			t.Fatalf("latest %d/%s/%s: %+v %v, want NotFound", p, name, branch, got, err)
		case id != 0 && (err != nil || got.ID != id):
			t.Fatalf("latest %d/%s/%s: %d %v, want %d", p, name, branch, got.ID, err, id)
		}
	}
	c1 := add(a.ID, "coverage", "main")
	add(a.ID, "coverage", "dev")
	c3 := add(a.ID, "coverage", "main")
	add(a.ID, "coverage-extra", "main") // a longer name, not a match
	add(b.ID, "coverage", "main")
	plain := add(a.ID, "e2e", "")
	want(a.ID, "coverage", "main", c3)
	want(a.ID, "e2e", "", plain)
	want(a.ID, "coverage", "", 0)
	want(a.ID, "nothing", "main", 0)
	if _, err := s.DeleteReport(ctx, c3); err != nil {
		t.Fatal(err)
	}
	want(a.ID, "coverage", "main", c1)
	if _, err := s.UpdateReport(ctx, c1, report.ReportChange{Meta: report.BuildMeta{Branch: ptr("release")}}); err != nil {
		t.Fatal(err)
	}
	want(a.ID, "coverage", "main", 0)
	want(a.ID, "coverage", "release", c1)
	if _, _, err := s.DeleteProject(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	want(a.ID, "coverage", "release", 0)
	want(b.ID, "coverage", "main", 5)
}
