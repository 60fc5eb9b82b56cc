package cli_test

// Issue 26 end to end: five builds on main and a pull request, reports
// made by the real generators (mocha + mochawesome, coverage.py) from
// inputs the test edits, published by the real reportctl to the real
// reportd, feedback to a fake GitHub on loopback, the dashboard in a real
// browser.

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/prfeedback/forgetest"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testbrowser"
)

// shopSpec is a mocha suite whose "flips" test passes or fails as told,
// with an extra failing "refunds" test on the pull request.
func shopSpec(flipsPasses, withRefunds bool) string {
	var b strings.Builder
	b.WriteString("const assert = require('node:assert');\ndescribe('shop', function () {\n")
	b.WriteString("  it('adds an item', () => assert.strictEqual([1].length, 1));\n")
	b.WriteString("  it('pays', () => assert.ok(true));\n")
	fmt.Fprintf(&b, "  it('flips', () => assert.ok(%v));\n", flipsPasses)
	if withRefunds {
		b.WriteString("  it('refunds', () => assert.strictEqual(1 + 1, 3));\n")
	}
	b.WriteString("});\n")
	return b.String()
}

// getJSON reads an API answer into v.
func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", u, err, body)
	}
}

// svgOf fetches an SVG and returns its elements.
func svgOf(t *testing.T, u string) []xml.StartElement {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out []xml.StartElement
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s is not XML: %v\n%s", u, err, body)
		}
		if se, ok := tok.(xml.StartElement); ok {
			out = append(out, se)
		}
	}
}

func titles(refs []report.TestRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Title)
	}
	return out
}

func TestPullRequestFiveBuilds(t *testing.T) {
	e := startCLIEnv(t)
	// Two outputs of each generator cover main's five builds (reused,
	// as CI would upload the same kind of run again); the pull request
	// has its own. Inputs vary; the figures are the tools' own.
	testsPass := sitegen.MochawesomeOf(t, "shop-pass", shopSpec(true, false))
	testsFail := sitegen.MochawesomeOf(t, "shop-fail", shopSpec(false, false))
	testsPR := sitegen.MochawesomeOf(t, "shop-pr", shopSpec(true, true))
	full := "from shapes import square, circle\nfrom shapes.names import name\n\n" +
		"assert square(3) == 9\nassert circle(1) > 3\nassert name(4) == 'square'\nassert name(5) == 'polygon'\nassert name(3) == 'triangle'\n"
	covMain := sitegen.CoveragePyOf(t, "cov-main", full)
	covPR := sitegen.CoveragePyOf(t, "cov-pr", "from shapes import square\n\nassert square(3) == 9\n")
	if *covPR.Want.Lines >= *covMain.Want.Lines {
		t.Fatalf("the pull request's coverage %v%% does not drop below main's %v%%", *covPR.Want.Lines, *covMain.Want.Lines)
	}

	gh := forgetest.GitHub(t, "ghs_test")
	push := func(i int) map[string]string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/shop", "GITHUB_REF": "refs/heads/main",
			"GITHUB_REF_NAME": "main", "GITHUB_SHA": fmt.Sprintf("m%d00000000000000000000000000000000000000", i), "GITHUB_API_URL": gh.URL, "GITHUB_TOKEN": "ghs_test"}
	}
	var project int64
	var mainIDs []int64
	for i := 1; i <= 5; i++ {
		tests := testsPass
		if i%2 == 0 {
			tests = testsFail // flips: pass, fail, pass, fail, pass
		}
		args := []string{"upload", tests.Dir, covMain.Dir, "--project-name", "shop", "--create-project", "--status"}
		res, _ := e.runCI(push(i), 0, args...)
		if len(res) != 2 {
			t.Fatalf("build %d: %+v", i, res)
		}
		project = res[0].ProjectID
		mainIDs = append(mainIDs, res[0].ID)
	}
	testsName := filepath.Base(testsPass.Dir) // the report names come from the folders
	covName := filepath.Base(covMain.Dir)

	// History: five points of each name on main, oldest first, with the
	// generator's figures.
	var hist []report.HistoryPoint
	getJSON(t, fmt.Sprintf("%s/api/projects/%d/history?name=%s&branch=main&flaky=true", e.server, project, url.QueryEscape(testsName)), &hist)
	if len(hist) != 5 {
		t.Fatalf("history of %s on main: %d points", testsName, len(hist))
	}
	for i, p := range hist {
		want := int64(0)
		if i%2 == 1 {
			want = 1
		}
		if p.ReportID != mainIDs[i] || p.Summary == nil || p.Summary.Failed == nil || *p.Summary.Failed != want || p.Commit == nil || (*p.Commit)[:2] != fmt.Sprintf("m%d", i+1) {
			t.Errorf("point %d: %+v", i, p)
		}
	}
	// Flaky: flips changed status four times within main's last ten runs.
	var flaky report.Comparison
	getJSON(t, fmt.Sprintf("%s/api/reports/%d/compare?base=previous", e.server, mainIDs[4]), &flaky)
	if got := titles(flaky.Flaky); len(got) != 1 || !strings.Contains(got[0], "flips") {
		t.Errorf("flaky on main's fifth build: %v", got)
	}
	if got := titles(flaky.Fixed); len(got) != 1 || !strings.Contains(got[0], "flips") {
		t.Errorf("fixed on main's fifth build: %v", got)
	}

	// The pull request: a new failing test, coverage dropping. Two pushes:
	// one comment per report name, edited by the second.
	pr := githubEnv(gh.URL, filepath.Join(e.dir, "summary.md"))
	pr["GITHUB_REPOSITORY"] = "org/shop"
	var prRes []feedbackResult
	for push := range 2 {
		pr["GITHUB_SHA"] = fmt.Sprintf("p%d00000000000000000000000000000000000000", push+1)
		res, stderr := e.runCI(pr, 7, "upload", testsPR.Dir, covPR.Dir, "--project-name", "shop", "--comment", "--status",
			"--fail-on", "new-failures", "--fail-under", fmt.Sprintf("coverage=%g", *covMain.Want.Lines))
		want := []string{"created", "created"}
		if push == 1 {
			want = []string{"updated", "updated"}
		}
		for i, r := range res {
			if r.Feedback == nil || r.Feedback.Comment != want[i] {
				t.Fatalf("push %d, %s: feedback %+v\n%s", push+1, r.Name, r.Feedback, stderr)
			}
			if push == 1 && r.Feedback.CommentID != prRes[i].Feedback.CommentID {
				t.Errorf("push 2 edited comment %d, push 1 made %d", r.Feedback.CommentID, prRes[i].Feedback.CommentID)
			}
		}
		prRes = res
	}
	if n := len(gh.Comments()); n != 2 {
		t.Fatalf("%d comments on the pull request, want one per report name", n)
	}
	var cmp report.Comparison
	getJSON(t, fmt.Sprintf("%s/api/reports/%d/compare?base=branch:main", e.server, prRes[0].ID), &cmp)
	if cmp.Base == nil || cmp.Base.ReportID != mainIDs[4] || len(cmp.NewFailures) != 1 || !strings.Contains(cmp.NewFailures[0].Title, "refunds") || cmp.Delta == nil || *cmp.Delta.Failed != 1 {
		t.Fatalf("pull request against main: %+v", cmp)
	}
	testsBody := ourComments(gh, project, testsName)[0].Body
	for _, want := range []string{"❌ quality gate failed", fmt.Sprintf("compared with [report %d]", mainIDs[4]), "on `main`", "| Failed | 0 | 1 | +1 |",
		"**New failures (1)**", "refunds", "`p20000000000`", "[Site](", "[PDF]("} {
		if !strings.Contains(testsBody, want) {
			t.Errorf("tests comment lacks %q:\n%s", want, testsBody)
		}
	}
	covBody := ourComments(gh, project, covName)[0].Body
	drop := fmt.Sprintf("%g", *covPR.Want.Lines-*covMain.Want.Lines)
	for _, want := range []string{"| Coverage |", strings.Replace(drop, "-", "−", 1), " pp |", "**Coverage dropped in**", "names.py", "❌ coverage ≥"} {
		if !strings.Contains(covBody, want) {
			t.Errorf("coverage comment lacks %q (change %s):\n%s", want, drop, covBody)
		}
	}
	if st := gh.Statuses(); len(st) != 5*2+2*2 || st[len(st)-1].State != prfeedback.StateFailure || st[0].State != prfeedback.StateSuccess {
		t.Errorf("%d statuses: %+v", len(st), st)
	}

	// The trend SVGs: the dashboard's chart (a link per build) and the README sparkline.
	links := 0
	for _, el := range svgOf(t, fmt.Sprintf("%s/api/projects/%d/history?name=%s&branch=main&format=svg", e.server, project, url.QueryEscape(testsName))) {
		if el.Name.Local == "a" {
			links++
		}
	}
	if links != 5 {
		t.Errorf("history chart: %d builds, want 5", links)
	}
	points := -1
	for _, el := range svgOf(t, fmt.Sprintf("%s/p/%d/%s/trend.svg?branch=main&metric=failed", e.server, project, url.PathEscape(testsName))) {
		if el.Name.Local == "polyline" {
			for _, a := range el.Attr {
				if a.Name.Local == "points" {
					points = len(strings.Fields(a.Value))
				}
			}
		}
	}
	if points != 5 {
		t.Errorf("trend.svg: %d points, want 5", points)
	}

	// The dashboard draws the same chart; its fifth build opens main's fifth report.
	ctx := testbrowser.Start(t, 3*time.Minute)
	sel := fmt.Sprintf(`figure.trend[data-name=%q][data-branch="main"] svg a.trend-point`, testsName)
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Navigate(fmt.Sprintf("%s/#/projects/%d", e.server, project))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll(%q).length === 5`, sel), chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("dashboard chart: %v", err)
	}
	n, _ := chromedp.Run(wctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	href, _ := chromedp.Run(wctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelectorAll(%q)[4].getAttribute('href')`, sel)))
	if n != 5 || href != fmt.Sprintf("#/reports/%d", mainIDs[4]) {
		t.Errorf("dashboard chart: %d builds, last opens %q", n, href)
	}
}
