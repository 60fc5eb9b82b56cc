package sitegen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// pwTests is a Playwright suite that needs no browser (no page fixture):
// passes, a failed assertion, a thrown error, a skipped test and a test
// that fails its first try and passes its retry (flaky).
const pwTests = `const { test, expect } = require('@playwright/test');
test('adds numbers', async () => { expect(1 + 1).toBe(2); });
test('multiplies wrongly', async () => { expect(2 * 2).toBe(5); });
test('throws', async () => { throw new TypeError('undefined is not a function'); });
test.skip('needs a printer', async () => {});
test('flaky on first try', async ({}, info) => { expect(info.retry).toBe(1); });
test.describe('strings', () => {
  test('upper case', async () => { expect('a'.toUpperCase()).toBe('A'); });
  test('contains', async () => { expect('report').toContain('port'); });
});
`

const pwConfig = `const { defineConfig } = require('@playwright/test');
module.exports = defineConfig({
  testDir: './tests',
  retries: 1,
  workers: 1,
  reporter: [
    ['html', { outputFolder: process.env.PW_HTML, open: 'never' }],
    ['json', { outputFile: process.env.PW_JSON }],
    ['allure-playwright', { resultsDir: process.env.PW_ALLURE }],
  ],
});
`

// pwRun is one run of the suite with three reporters: html (the
// Playwright site), json (its stats) and allure-playwright (the
// allure-results the Allure site is made from).
type pwRun struct {
	html, json, allure string
}

func pwPaths(dir string) pwRun {
	return pwRun{html: filepath.Join(dir, "playwright-report"), json: filepath.Join(dir, "results.json"), allure: filepath.Join(dir, "allure-results")}
}

func playwrightRun(g *gen) (pwRun, error) {
	_, err := g.get("playwright-run", func(_ *gen, dir string) (Site, error) {
		pw, err := npmBin("playwright")
		if err != nil {
			return Site{}, err
		}
		src := filepath.Join(dir, "src")
		if err := write(src, map[string]string{"playwright.config.js": pwConfig, "tests/calc.spec.js": pwTests}); err != nil {
			return Site{}, err
		}
		if err := linkModules(src); err != nil {
			return Site{}, err
		}
		r := pwPaths(dir)
		env := append([]string{"PW_HTML=" + r.html, "PW_JSON=" + r.json, "PW_ALLURE=" + r.allure}, nodeEnv...)
		if _, err := run(src, env, true, pw, "test"); err != nil {
			return Site{}, err
		}
		return Site{Dir: dir}, exists(filepath.Join(r.html, "index.html"), r.json, r.allure)
	})
	return pwPaths(filepath.Join(g.root, "playwright-run")), err
}

// Playwright is the HTML reporter's site (index.html with the report
// embedded, data/ with attachments) of a run with passed, failed,
// skipped and flaky tests, and the stats of the JSON reporter of the
// same run: Passed = expected + flaky, Failed = unexpected, Skipped =
// skipped, Flaky = flaky.
func Playwright(t testing.TB) Site {
	t.Helper()
	return site(t, "playwright", func(g *gen, _ string) (Site, error) {
		r, err := playwrightRun(g)
		if err != nil {
			return Site{}, err
		}
		var res struct {
			Stats struct{ Expected, Unexpected, Flaky, Skipped *int64 }
		}
		if err := readJSON(r.json, &res); err != nil {
			return Site{}, err
		}
		st := res.Stats
		if st.Expected == nil || st.Unexpected == nil || st.Flaky == nil || st.Skipped == nil {
			return Site{}, fmt.Errorf("playwright json reporter: stats incomplete: %+v", st)
		}
		return Site{Dir: r.html, Entry: "index.html", Want: report.Summary{
			Passed: ptr(*st.Expected + *st.Flaky), Failed: st.Unexpected, Skipped: st.Skipped, Flaky: st.Flaky,
		}}, nil
	})
}

// Allure is Allure 3's report (`allure generate`, the Awesome plugin: an
// app fetching data/*.json, widgets/*.json, summary.json) of the
// allure-results allure-playwright wrote for the Playwright run. The
// figures come from those results: for every test (historyId) its last
// result (latest stop) counts by status; Passed = passed, Failed = failed
// + broken, Skipped = skipped.
func Allure(t testing.TB) Site {
	t.Helper()
	return site(t, "allure", func(g *gen, dir string) (Site, error) {
		allure, err := npmBin("allure")
		if err != nil {
			return Site{}, err
		}
		r, err := playwrightRun(g)
		if err != nil {
			return Site{}, err
		}
		out := filepath.Join(dir, "allure-report")
		if _, err := run(dir, nodeEnv, false, allure, "generate", r.allure, "--output", out); err != nil {
			return Site{}, err
		}
		want, err := allureResults(r.allure)
		if err != nil {
			return Site{}, err
		}
		return Site{Dir: out, Entry: "index.html", Want: want}, exists(filepath.Join(out, "index.html"))
	})
}

// allureResults counts the final status of each test in allure-results.
func allureResults(dir string) (report.Summary, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return report.Summary{}, err
	}
	type res struct {
		HistoryID string `json:"historyId"`
		Status    string
		Stop      int64
	}
	last := map[string]res{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "-result.json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return report.Summary{}, err
		}
		var r res
		if err := json.Unmarshal(b, &r); err != nil || r.HistoryID == "" || r.Status == "" {
			return report.Summary{}, fmt.Errorf("allure result %s: %v", e.Name(), err)
		}
		if prev, ok := last[r.HistoryID]; !ok || r.Stop > prev.Stop {
			last[r.HistoryID] = r
		}
	}
	var passed, failed, skipped int64
	for _, r := range last {
		switch r.Status {
		case "passed":
			passed++
		case "failed", "broken":
			failed++
		case "skipped":
			skipped++
		default:
			return report.Summary{}, fmt.Errorf("allure result status %q", r.Status)
		}
	}
	if len(last) == 0 {
		return report.Summary{}, fmt.Errorf("no results in %s", dir)
	}
	return report.Summary{Passed: &passed, Failed: &failed, Skipped: &skipped}, nil
}
