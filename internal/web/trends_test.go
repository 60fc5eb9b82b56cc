package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardTrendsAndCompare: the project page shows a server-made
// trend chart per report name and branch whose builds are links the
// keyboard reaches and Enter opens; the reader compares a report with the
// base the reader picks.
func TestDashboardTrendsAndCompare(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	p := d.api(t, "POST", "/projects", map[string]any{"name": "trends"})
	id := int(p["id"].(float64))
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "detect", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cov, tests := read("coveragepy-6.5.0-index.html"), read("pytest-html-4.html")
	for _, c := range []string{"c1", "c2", "c3"} { // reports 1-3
		d.uploadFile(t, id, "index.html", "html", cov, map[string]string{"name": "coverage", "branch": "main", "commit": c})
	}
	for _, c := range []string{"c1", "c2"} { // reports 4-5
		d.uploadFile(t, id, "report.html", "html", tests, map[string]string{"name": "tests", "branch": "main", "commit": c})
	}
	d.uploadFile(t, id, "index.html", "html", cov, map[string]string{"name": "coverage", "branch": "feature", "commit": "c4"}) // 6

	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + fmt.Sprintf("/#/projects/%d", id)))
	b.waitFor("three charts", `document.querySelectorAll('.trend .trend-svg svg').length === 3`, 60*time.Second)
	chart := func(name, branch string) string {
		return fmt.Sprintf(`document.querySelector('figure.trend[data-name=%s][data-branch=%s] svg')`, jsString(name), jsString(branch))
	}
	if n := eval[int](b, chart("coverage", "main")+`.querySelectorAll('a.trend-point').length`); n != 3 {
		t.Errorf("coverage on main: %d builds, want 3", n)
	}
	if n := eval[int](b, chart("coverage", "main")+`.querySelectorAll('circle.trend-coverage-point').length`); n != 3 {
		t.Errorf("coverage on main: %d coverage points, want 3", n)
	}
	if n := eval[int](b, chart("tests", "main")+`.querySelectorAll('rect.trend-failed').length`); n != 2 {
		t.Errorf("tests on main: %d failed bars, want 2", n)
	}
	// Screen readers: a labelled group, and a label per build naming it.
	if got := eval[string](b, chart("coverage", "main")+`.getAttribute('role')`); got != "group" {
		t.Errorf("chart role %q", got)
	}
	label := eval[string](b, `(() => { const s = `+chart("coverage", "main")+`; return s.getAttribute('aria-labelledby').split(' ').map((id) => document.getElementById(id).textContent).join(' | '); })()`)
	if !strings.Contains(label, "coverage on main") || !strings.Contains(label, "3 builds") {
		t.Errorf("chart label %q", label)
	}
	last := eval[string](b, chart("coverage", "main")+`.querySelectorAll('a.trend-point')[2].getAttribute('aria-label')`)
	if !strings.Contains(last, "commit c3") || !strings.Contains(last, "coverage 80%") {
		t.Errorf("last build's label %q", last)
	}
	checkContrast(t, b, "trend charts")

	// Keyboard: Tab reaches the first build of coverage on main; Enter opens it.
	target := `figure.trend[data-name="coverage"][data-branch="main"] a.trend-point`
	reached := false
	for range 80 {
		b.do(chromedp.KeyEvent("\t"))
		if eval[bool](b, `document.activeElement.matches(`+jsString(target)+`)`) {
			reached = true
			break
		}
	}
	if !reached {
		t.Fatalf("Tab never reached a build of the chart; focus is on %s", eval[string](b, `document.activeElement.outerHTML.slice(0, 120)`))
	}
	b.do(chromedp.KeyEvent("\r"))
	b.waitFor("the first build's report", `location.hash === '#/reports/1'`, 30*time.Second)

	// The reader: feature has no earlier build; main's newest is the base a PR wants.
	b.do(chromedp.Navigate(d.base + "/#/reports/6"))
	b.waitFor("no base on feature", `(document.querySelector('#compare .compare-body') || {}).textContent === 'No earlier report of this name to compare with.'`, 30*time.Second)
	if got := eval[[]string](b, `[...document.querySelectorAll('#compare-base option')].map((o) => o.value)`); strings.Join(got, " ") != "previous branch:main 3 2 1" {
		t.Errorf("base picker offers %v", got)
	}
	choose(b, "#compare-base", "branch:main")
	b.waitFor("compared with main", `(document.querySelector('#compare .compare-base') || {}).textContent?.startsWith('Compared with report 3 on main at c3')`, 30*time.Second)
	if got := b.text(`#compare .compare-table tbody tr`); !strings.Contains(got, "Coverage") || !strings.Contains(got, "±0") {
		t.Errorf("comparison table row %q", got)
	}
	choose(b, "#compare-base", "1")
	b.waitFor("compared with report 1", `(document.querySelector('#compare .compare-base') || {}).textContent?.startsWith('Compared with report 1 ')`, 30*time.Second)
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems: %v", p)
	}
}
