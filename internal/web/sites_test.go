package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/sitegen"
)

// poll waits until the JavaScript expression js gives a truthy value (an
// object always is) and returns it; on failure it shows the body's text.
// timeout bounds a failure only.
func poll[T any](b *browser, what, js string, timeout time.Duration) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](js, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil {
		b.t.Fatalf("waiting for %s: %v\nlocation: %s\nbody text:\n%s", what, err, eval[string](b, `location.href`), bodyText(b))
	}
	return v
}

func bodyText(b *browser) string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : '(no body)'`))
	return s
}

// rowsJS reads coverage.py's index table: each file row's name and its
// coverage ratio (covered/statements from the cell's data-ratio).
const rowsJS = `[...document.querySelectorAll('table.index tbody tr.file')].map((tr) => {
	const [a, b] = tr.querySelector('td[data-ratio]').dataset.ratio.split(' ').map(Number);
	return { name: tr.querySelector('td.name').textContent.trim(), ratio: b ? a / b : 1 };
})`

type covRow struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"`
}

type covSort struct {
	Before []covRow `json:"before"`
	After  []covRow `json:"after"`
	Order  string   `json:"order"` // the coverage header's aria-sort after the click
}

// checkSorted fails unless the click reordered the rows by coverage, in
// the direction the header says.
func checkSorted(t *testing.T, where string, s covSort) {
	t.Helper()
	names := func(rs []covRow) string {
		var n []string
		for _, r := range rs {
			n = append(n, r.Name)
		}
		return strings.Join(n, ",")
	}
	if len(s.Before) < 4 || len(s.After) != len(s.Before) {
		t.Fatalf("%s: coverage.py's table: %d rows before, %d after the click", where, len(s.Before), len(s.After))
	}
	if names(s.Before) == names(s.After) {
		t.Errorf("%s: clicking the coverage header left the rows in place: %s", where, names(s.After))
	}
	if s.Order != "ascending" && s.Order != "descending" {
		t.Errorf("%s: coverage header aria-sort %q after the click", where, s.Order)
	}
	for i := 1; i < len(s.After); i++ {
		a, b := s.After[i-1].Ratio, s.After[i].Ratio
		if (s.Order == "ascending" && a > b) || (s.Order == "descending" && a < b) {
			t.Errorf("%s: rows not sorted %s by coverage: %+v", where, s.Order, s.After)
			break
		}
	}
	t.Logf("%s: %s → %s (%s)", where, names(s.Before), names(s.After), s.Order)
}

// jsSortInFrame sorts coverage.py's table by a script click on its
// coverage header and reports the rows before and after.
// (Its script wires the headers on DOMContentLoaded: complete is after.)
const jsSortInFrame = `document.readyState === 'complete' && document.querySelector('table.index th[data-shortcut=c]') && (() => {
	const before = ` + rowsJS + `;
	const th = document.querySelector('table.index th[data-shortcut=c]');
	th.click();
	return { before, after: ` + rowsJS + `, order: th.getAttribute('aria-sort') };
})()`

// generatorSite is a real generator's site and what shows its app ran.
type generatorSite struct {
	name string
	site func(testing.TB) sitegen.Site
	// ran is a JavaScript expression that is truthy (a string saying what
	// it saw) once the app has drawn itself; evaluated at the top level
	// and inside the dashboard's frame.
	ran func(s sitegen.Site) string
	// top, when set, interacts with the site opened in its own tab.
	top func(t *testing.T, b *browser, s sitegen.Site)
	// drawn are texts the app draws: they are not in the text of the
	// entry page as served (scripts and templates left out).
	drawn []string
}

// inStaticMarkup is which of texts the entry page's markup, as served and
// parsed without running anything, shows as text.
func inStaticMarkup(b *browser, texts []string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`fetch(location.href).then((r) => r.text()).then((html) => {
		const doc = new DOMParser().parseFromString(html, 'text/html');
		doc.querySelectorAll('script, template, noscript').forEach((e) => e.remove());
		const text = doc.body ? doc.body.textContent : '';
		return %s.filter((s) => text.includes(s));
	})`, jsList(texts)))
}

func jsList(ss []string) string {
	b, _ := json.Marshal(ss)
	return string(b)
}

// hasTexts is a JavaScript condition: the body's rendered text
// (innerText: no markup, no script, no attribute values) holds every
// string.
func hasTexts(texts ...string) string {
	c := []string{"!!document.body"}
	for _, s := range texts {
		c = append(c, fmt.Sprintf("document.body.innerText.includes(%s)", jsString(s)))
	}
	return strings.Join(c, " && ")
}

// textsJS is hasTexts, giving a string naming the texts.
func textsJS(texts ...string) string {
	return hasTexts(texts...) + " && " + jsString("all of "+strings.Join(texts, ", "))
}

// pwTitles are test titles of sitegen's Playwright suite.
var pwTitles = []string{"adds numbers", "multiplies wrongly", "throws", "flaky on first try", "upper case", "contains"}

var generatorSites = []generatorSite{
	{
		name: "coverage.py",
		site: sitegen.CoveragePy,
		ran:  func(sitegen.Site) string { return jsSortInFrame },
		top: func(t *testing.T, b *browser, _ sitegen.Site) {
			before := poll[[]covRow](b, "coverage.py's table", `document.readyState === 'complete' && document.querySelectorAll('table.index tbody tr.file').length >= 4 && `+rowsJS, 30*time.Second)
			b.click(`table.index th[data-shortcut=c]`)
			after := eval[[]covRow](b, rowsJS)
			checkSorted(t, "its own tab, a mouse click", covSort{Before: before, After: after, Order: eval[string](b, `document.querySelector('table.index th[data-shortcut=c]').getAttribute('aria-sort')`)})
		},
	},
	{
		name: "c8",
		site: sitegen.C8,
		// istanbul's sorter.js appends a .sorter to every sortable header
		// and the file filter box from its template, at load.
		ran: func(sitegen.Site) string {
			return `document.querySelector('table.coverage-summary tbody tr') && document.querySelectorAll('table.coverage-summary th .sorter').length > 0 &&
				'table of ' + document.querySelectorAll('table.coverage-summary tbody tr').length + ' rows, ' + document.querySelectorAll('table.coverage-summary th .sorter').length + ' sorters'`
		},
	},
	{
		name:  "Playwright",
		site:  sitegen.Playwright,
		ran:   func(sitegen.Site) string { return textsJS(pwTitles...) },
		drawn: pwTitles,
	},
	{
		name: "Allure",
		site: sitegen.Allure,
		// Allure 3's app fetches its data (data/*.json, widgets/*.json)
		// and draws the summary from it: the totals the adapter's results
		// give, and the top-level tests of the tree.
		ran: func(s sitegen.Site) string {
			w := s.Want
			figures := []string{fmt.Sprintf("Total %d", *w.Passed+*w.Failed+*w.Skipped), fmt.Sprintf("Passed %d", *w.Passed),
				fmt.Sprintf("Failed %d", *w.Failed), fmt.Sprintf("Skipped %d", *w.Skipped)}
			return `(() => {
				const json = performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((p) => p.endsWith('.json'));
				return json.length > 0 && ` + hasTexts(append(figures, "adds numbers", "multiplies wrongly", "needs a printer", "strings")...) + ` &&
					'summary ' + ` + jsString(strings.Join(figures, ", ")) + ` + ' drawn from ' + json.length + ' JSON files fetched, e.g. ' + json.slice(0, 3).join(' ');
			})()`
		},
		drawn: []string{"adds numbers", "multiplies wrongly", "needs a printer"},
	},
	{
		name: "mochawesome",
		site: sitegen.Mochawesome,
		ran: func(sitegen.Site) string {
			return textsJS("cart", "checkout", "adds an item", "sends a receipt", "mail server down")
		},
		drawn: []string{"adds an item", "sends a receipt", "mail server down"},
	},
}

// TestGeneratorSitesRun: each real generator's site, published with
// `reportctl upload DIR` to the real daemon with a token, opens from the
// siteUrl reportctl printed (signed, exchanged for the origin's cookie)
// in headless Chromium with its app running, and runs the same inside
// the dashboard's frame on the API origin.
func TestGeneratorSitesRun(t *testing.T) {
	d := startSiteDaemon(t, false)
	b := startBrowser(t)
	parent := b.t
	for _, g := range generatorSites {
		t.Run(g.name, func(t *testing.T) {
			b.t = t
			defer func() { b.t = parent }()
			s := g.site(t)
			p := d.publish(t, s.Dir)
			t.Logf("report %d (%d files, generator %q): %s", p.ID, p.Files, p.Generator, p.SiteURL)
			if p.Files != len(s.Files) {
				t.Errorf("reportctl says %d files, the generator wrote %d", p.Files, len(s.Files))
			}

			b.do(chromedp.Navigate(p.SiteURL))
			if g.top != nil {
				g.top(t, b, s)
			} else {
				t.Logf("its own tab: %v", poll[any](b, g.name+" app", g.ran(s), 45*time.Second))
			}
			if len(g.drawn) > 0 {
				if got := inStaticMarkup(b, g.drawn); len(got) > 0 {
					t.Errorf("%v are text of the entry page as served: the check does not prove its scripts drew them", got)
				}
			}
			if loc := eval[string](b, `location.href`); origin(t, loc) != origin(t, p.SiteURL) || strings.Contains(loc, "?") {
				t.Errorf("after the exchange the tab is at %s", loc)
			}

			b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", d.base, p.ID)))
			frameOrigin := inFrame[string](b, "iframe.frame-site", g.name+" in the dashboard", `document.readyState === 'complete' && location.origin`)
			if frameOrigin != origin(t, p.SiteURL) || frameOrigin == d.base {
				t.Errorf("the dashboard's frame is on %s, want the report's origin %s", frameOrigin, origin(t, p.SiteURL))
			}
			if g.name == "coverage.py" {
				checkSorted(t, "the dashboard's frame, a script click", inFrame[covSort](b, "iframe.frame-site", "coverage.py's table in the frame", g.ran(s)))
			} else {
				t.Logf("the dashboard's frame: %v", inFrame[any](b, "iframe.frame-site", g.name+" app in the frame", g.ran(s)))
			}
		})
	}
	if p := b.problems(); len(p) > 0 {
		t.Logf("console problems seen (generators' own included):\n%s", strings.Join(p, "\n"))
	}
}
