package cli_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sitegen"
)

// TestJUnitAndGoCoverBuilds: three builds on main of mocha's JUnit XML
// (its xunit reporter) and go cover: the first two on one commit with a
// test that passes then fails (flaky by the same-commit rule), the third
// on a new commit where it passes again (fixed, and two changes) and the
// Go tests no longer call Mul and Div (mul.go's coverage drops). History,
// compare and reportctl history show it.
func TestJUnitAndGoCoverBuilds(t *testing.T) {
	e := startCLIEnv(t)
	junitPass := sitegen.MochaJUnitOf(t, "junit-pass", shopSpec(true, false))
	junitFail := sitegen.MochaJUnitOf(t, "junit-fail", shopSpec(false, false))
	coverFull := sitegen.GoCoverOf(t, "gocover-full",
		"\tif Add(1, 2) != 3 || Mul(2, 3) != 6 || Sub(5, 3) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n\tif _, ok := Div(1, 0); ok {\n\t\tt.Fatal(\"wrong\")\n\t}")
	coverLess := sitegen.GoCoverOf(t, "gocover-less", "\tif Add(1, 2) != 3 || Sub(5, 3) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}")
	if *coverLess.Want.Lines >= *coverFull.Want.Lines {
		t.Fatalf("coverage %v%% does not drop below %v%%", *coverLess.Want.Lines, *coverFull.Want.Lines)
	}
	builds := []struct {
		sha          string
		junit, cover sitegen.Site
	}{{"a1", junitPass, coverFull}, {"a1", junitFail, coverFull}, {"b2", junitPass, coverLess}}
	var project int64
	var junitIDs, coverIDs []int64
	for i, b := range builds {
		env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/calc", "GITHUB_REF": "refs/heads/main",
			"GITHUB_REF_NAME": "main", "GITHUB_SHA": b.sha + strings.Repeat("0", 38)}
		res, _ := e.runCI(env, 0, "upload", b.junit.Dir, b.cover.Dir, "--project-name", "calc", "--create-project")
		if len(res) != 2 {
			t.Fatalf("build %d: %+v", i+1, res)
		}
		project = res[0].ProjectID
		junitIDs, coverIDs = append(junitIDs, res[0].ID), append(coverIDs, res[1].ID)
	}
	junitName := filepath.Base(junitPass.Dir)

	// JUnit history: the tools' figures per point, flips marked flaky at
	// the second (same commit) and third (two changes) points.
	var hist []report.HistoryPoint
	getJSON(t, fmt.Sprintf("%s/api/projects/%d/history?name=%s&branch=main&flaky=true", e.server, project, url.QueryEscape(junitName)), &hist)
	if len(hist) != 3 {
		t.Fatalf("history of %s: %d points", junitName, len(hist))
	}
	for i, p := range hist {
		wantFlaky := 1
		if i == 0 {
			wantFlaky = 0
		}
		if p.ReportID != junitIDs[i] || len(p.Flaky) != wantFlaky || (wantFlaky == 1 && !strings.Contains(p.Flaky[0].Title, "flips")) {
			t.Errorf("junit point %d: %+v", i, p)
		}
	}
	var cmp report.Comparison
	getJSON(t, fmt.Sprintf("%s/api/reports/%d/compare", e.server, junitIDs[1]), &cmp)
	if got := titles(cmp.NewFailures); cmp.Base == nil || cmp.Base.ReportID != junitIDs[0] || len(got) != 1 || !strings.Contains(got[0], "flips") || len(cmp.Flaky) != 1 {
		t.Errorf("junit build 2 against build 1: %+v", cmp)
	}
	getJSON(t, fmt.Sprintf("%s/api/reports/%d/compare", e.server, junitIDs[2]), &cmp)
	if got := titles(cmp.Fixed); len(got) != 1 || !strings.Contains(got[0], "flips") || len(cmp.NewFailures) != 0 || len(cmp.StillFailing) != 0 {
		t.Errorf("junit build 3 against build 2: %+v", cmp)
	}

	// Go cover: build 3 against build 2 lists mul.go, whose coverage dropped.
	getJSON(t, fmt.Sprintf("%s/api/reports/%d/compare", e.server, coverIDs[2]), &cmp)
	var dropped []string
	for _, f := range cmp.Files {
		dropped = append(dropped, f.Path)
		if f.After >= f.Before {
			t.Errorf("file %s listed as dropped: %v -> %v", f.Path, f.Before, f.After)
		}
	}
	if len(dropped) != 1 || !strings.HasSuffix(dropped[0], "mul.go") || cmp.Delta == nil || cmp.Delta.Lines == nil || *cmp.Delta.Lines >= 0 {
		t.Errorf("go cover build 3 against build 2: files %v, %+v", dropped, cmp)
	}

	// reportctl history: the MARKED column counts the flaky tests per build.
	out := e.run("history", "--project", fmt.Sprint(project), "--name", junitName, "--branch", "main")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 { // no header off a terminal
		t.Fatalf("reportctl history:\n%s", out)
	}
	for i, want := range []string{"0", "1", "1"} {
		f := strings.Fields(lines[i])
		if f[len(f)-1] != want {
			t.Errorf("reportctl history row %d: marked %s, want %s\n%s", i+1, f[len(f)-1], want, out)
		}
	}
}
