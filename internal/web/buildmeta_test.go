package web_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testfixture"
)

// upload posts a Markdown report with build metadata fields, as reportctl does.
func (d *daemon) upload(t *testing.T, project int, fileName string, fields map[string]string) {
	t.Helper()
	d.uploadFile(t, project, fileName, "md", []byte("# "+fileName+"\n"), fields)
}

// uploadFile posts content as a report of fileType with extra form fields.
func (d *daemon) uploadFile(t *testing.T, project int, fileName, fileType string, content []byte, fields map[string]string) {
	t.Helper()
	ct, buf := testfixture.UploadBody(int64(project), fileType, fileName, content, fields)
	resp, err := http.Post(d.base+"/api/reports", ct, buf)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload %s: %d", fileName, resp.StatusCode)
	}
}

// TestDashboardBuildMetadata: a project's reports show name, branch,
// short commit and a build link, and filter by name and branch.
func TestDashboardBuildMetadata(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	p := d.api(t, "POST", "/projects", map[string]any{"name": "web"})
	id := int(p["id"].(float64))
	d.upload(t, id, "coverage.md", map[string]string{"branch": "main", "commit": "3f2c9a1e8b7d6c5b4a39281706f5e4d3c2b1a098", "buildUrl": "https://ci.example.com/b/7", "buildId": "7"})
	d.upload(t, id, "coverage.md", map[string]string{"branch": "feature/login"})
	d.upload(t, id, "e2e.md", map[string]string{"branch": "main"})

	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + fmt.Sprintf("/#/projects/%d", id)))
	b.waitFor("three reports", `document.querySelectorAll('.report').length === 3`, 30*time.Second)
	first := `document.querySelector('.report[data-report-id="1"] .report-meta')`
	if got := eval[string](b, first+`.textContent`); got != "coveragemain3f2c9a1e8b7dBuild #7" {
		t.Errorf("first report's metadata %q", got)
	}
	if got := eval[string](b, first+`.querySelector('a.meta-build').href`); got != "https://ci.example.com/b/7" {
		t.Errorf("build link %q", got)
	}
	checkContrast(t, b, "reports with build metadata")
	for sel, want := range map[string]string{"#filter-name": "All names", "#filter-branch": "All branches"} {
		if got := eval[string](b, `document.querySelector(`+jsString(sel)+`).options[0].textContent`); got != want {
			t.Errorf("%s offers %q first, want %q", sel, got, want)
		}
	}

	choose(b, "#filter-name", "coverage")
	b.waitFor("name filter", `document.querySelectorAll('.report').length === 2`, 30*time.Second)
	choose(b, "#filter-branch", "main")
	b.waitFor("name and branch filter", `document.querySelectorAll('.report').length === 1`, 30*time.Second)
	if got := eval[string](b, `document.querySelector('.report').dataset.reportId`); got != "1" {
		t.Errorf("coverage on main is report %s, want 1", got)
	}
	if got := eval[string](b, `document.activeElement.id`); got != "filter-branch" {
		t.Errorf("focus after filtering is on %q, want #filter-branch", got)
	}
	choose(b, "#filter-name", "e2e")
	choose(b, "#filter-branch", "")
	b.waitFor("e2e only", `document.querySelectorAll('.report').length === 1 && document.querySelector('.report').dataset.reportId === "3"`, 30*time.Second)
}

// choose picks value in the select sel as a user would: the value changes
// and a change event fires.
func choose(b *browser, sel, value string) {
	b.t.Helper()
	eval[bool](b, fmt.Sprintf(`(() => { const s = document.querySelector(%s); s.focus(); s.value = %s; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`,
		jsString(sel), jsString(value)))
}

// TestDashboardShowsSummary: reports reportd recognised show their headline
// figures (line coverage, test counts, flaky tests) in the project's list
// and the reader; others show none.
func TestDashboardShowsSummary(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	p := d.api(t, "POST", "/projects", map[string]any{"name": "ci"})
	id := int(p["id"].(float64))
	for _, f := range []string{"coveragepy-6.5.0-index.html", "pytest-html-4.html"} {
		b, err := os.ReadFile(filepath.Join("..", "detect", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		d.uploadFile(t, id, f, "html", b, nil)
	}
	d.upload(t, id, "notes.md", nil)
	// A real Playwright report (one self-contained page) of a run with a
	// test that passed only on its retry.
	pw := sitegen.Playwright(t)
	page, err := os.ReadFile(filepath.Join(pw.Dir, pw.Entry))
	if err != nil {
		t.Fatal(err)
	}
	d.uploadFile(t, id, "playwright.html", "html", page, nil)
	w := pw.Want
	if w.Flaky == nil || *w.Flaky == 0 {
		t.Fatalf("the Playwright run reported no flaky test: %+v", w)
	}
	wantPW := fmt.Sprintf("%d passed%d failed%d skipped%d flaky", *w.Passed, *w.Failed, *w.Skipped, *w.Flaky)

	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + fmt.Sprintf("/#/projects/%d", id)))
	b.waitFor("four reports", `document.querySelectorAll('.report').length === 4`, 30*time.Second)
	summary := func(report int) string {
		return eval[string](b, fmt.Sprintf(`(document.querySelector('.report[data-report-id="%d"] .report-summary') || {textContent: ''}).textContent`, report))
	}
	if got := summary(1); got != "80% lines" {
		t.Errorf("coverage.py report's summary %q, want 80%% lines", got)
	}
	if got := summary(2); got != "5 passed3 failed2 skipped" {
		t.Errorf("pytest-html report's summary %q", got)
	}
	if got := summary(3); got != "" {
		t.Errorf("a Markdown note shows a summary: %q", got)
	}
	if got := summary(4); got != wantPW {
		t.Errorf("Playwright report's summary %q, want %q", got, wantPW)
	}
	if got := eval[string](b, `(document.querySelector('.report[data-report-id="4"] .sum-flaky') || {title: ''}).title`); !strings.Contains(got, "also counted in passed") {
		t.Errorf("the flaky figure's title %q does not say they are counted in passed too", got)
	}
	if got := eval[string](b, `document.querySelector('.report[data-report-id="1"] .report-summary').title`); got != "Read from the coverage.py report" {
		t.Errorf("summary title %q", got)
	}
	checkContrast(t, b, "reports with summaries")

	b.do(chromedp.Navigate(d.base + "/#/reports/2"))
	b.waitFor("the reader's summary", `(document.querySelector('.reader-bar .report-summary') || {}).textContent === "5 passed3 failed2 skipped"`, 30*time.Second)
	b.do(chromedp.Navigate(d.base + "/#/reports/4"))
	b.waitFor("the reader's summary with flaky tests", fmt.Sprintf(`(document.querySelector('.reader-bar .report-summary') || {}).textContent === %s`, jsString(wantPW)), 30*time.Second)
}
