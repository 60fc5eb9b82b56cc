package convert

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Sites written by the JavaScript report generators that draw themselves
// (Playwright, Allure 3, mochawesome) or span many pages (c8), generated
// here by the real tools: `bash scripts/install-deps.sh test` installs
// them, pinned, in REPORTD_NPM (else ${XDG_CACHE_HOME:-$HOME/.cache}/reportd-npm).

// npmTool is an installed generator's executable; the test skips, saying
// how to install it, when it is missing.
func npmTool(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("REPORTD_NPM")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			cache = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		dir = filepath.Join(cache, "reportd-npm")
	}
	p := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (bash scripts/install-deps.sh test)")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed in %s (bash scripts/install-deps.sh test)", name, dir)
	}
	return p
}

// runTool runs a generator in dir with its packages resolvable and off the
// network; okFail allows a non-zero exit (failing tests are the point).
func runTool(t *testing.T, dir string, okFail bool, env []string, tool string, args ...string) {
	t.Helper()
	mods := filepath.Dir(filepath.Dir(tool)) // node_modules/.bin/<tool>
	if _, err := os.Lstat(filepath.Join(dir, "node_modules")); err != nil {
		if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"NO_COLOR=1", "FORCE_COLOR=0",
		"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1", "NODE_OPTIONS="}, env...)...)
	if out, err := cmd.CombinedOutput(); err != nil && !okFail {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(tool), strings.Join(args, " "), err, out)
	}
}

// The Playwright HTML report and the Allure 3 report of one Playwright
// run (tests that use no page, so no browser download) draw their tests
// from their data (Allure fetches data/*.json): the entry PDFs list them.
func TestSitePlaywrightAndAllure(t *testing.T) {
	testfixture.NeedChromium(t)
	pw := npmTool(t, "playwright")
	allure := npmTool(t, "allure")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFiles(t, src, map[string]string{
		"playwright.config.js": `const { defineConfig } = require('@playwright/test');
module.exports = defineConfig({ testDir: './tests', workers: 1,
  reporter: [['html', { outputFolder: process.env.PW_HTML, open: 'never' }],
             ['allure-playwright', { resultsDir: process.env.PW_ALLURE }]] });
`,
		"tests/calc.spec.js": `const { test, expect } = require('@playwright/test');
test('adds numbers', async () => { expect(1 + 1).toBe(2); });
test('multiplies wrongly', async () => { expect(2 * 2).toBe(5); });
test.skip('needs a printer', async () => {});
`,
	})
	html, results := filepath.Join(dir, "playwright-report"), filepath.Join(dir, "allure-results")
	runTool(t, src, true, []string{"PW_HTML=" + html, "PW_ALLURE=" + results}, pw, "test")
	runTool(t, dir, false, nil, allure, "generate", results, "--output", filepath.Join(dir, "allure-report"))
	m := sharedManager(t)

	text := testfixture.PDFText(t, convertOK(t, m, siteJobFor(t, html, "index.html", "playwright", "")))
	testfixture.WantText(t, text, "adds numbers", "multiplies wrongly", "calc.spec.js", "Passed", "Failed", "Skipped")

	text = testfixture.PDFText(t, convertOK(t, m, siteJobFor(t, filepath.Join(dir, "allure-report"), "index.html", "allure", "")))
	testfixture.WantText(t, text, "Allure Report", "adds numbers", "multiplies wrongly")
}

// mochawesome's report draws its suites with React from inline data.
func TestSiteMochawesome(t *testing.T) {
	testfixture.NeedChromium(t)
	mocha := npmTool(t, "mocha")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"test/calc.test.js": `const assert = require('assert');
describe('Calculator suite', () => {
  it('adds two numbers', () => assert.strictEqual(1 + 1, 2));
  it('divides badly', () => assert.strictEqual(1 / 2, 2));
});
`})
	runTool(t, dir, true, nil, mocha, "--reporter", "mochawesome", "--reporter-options", "reportDir=out,reportFilename=index", "test")
	text := testfixture.PDFText(t, convertOK(t, sharedManager(t), siteJobFor(t, filepath.Join(dir, "out"), "index.html", "mochawesome", "")))
	testfixture.WantText(t, text, "Calculator suite", "adds two numbers", "divides badly", "AssertionError")
}

// c8's istanbul report is a tree of pages (folders, files): scope=site
// prints each, breadth first from the index, with a bookmark each.
func TestSiteC8Tree(t *testing.T) {
	testfixture.NeedChromium(t)
	c8 := npmTool(t, "c8")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFiles(t, src, map[string]string{
		"package.json": `{"name":"calc","version":"1.0.0","private":true}`,
		"math.js":      "function add(a, b) { return a + b; }\nfunction div(a, b) {\n  if (b === 0) {\n    throw new Error('zero');\n  }\n  return a / b;\n}\nmodule.exports = { add, div };\n",
		"lib/str.js":   "function shout(s) { return s.toUpperCase(); }\nfunction whisper(s) { return s.toLowerCase(); }\nmodule.exports = { shout, whisper };\n",
		"test/calc.test.js": "const test = require('node:test');\nconst m = require('../math');\nconst s = require('../lib/str');\n" +
			"test('calc', () => { m.add(1, 2); s.shout('a'); });\n",
	})
	out := filepath.Join(dir, "coverage")
	runTool(t, src, false, nil, c8, "--reporter=html", "--reports-dir="+out, "--temp-directory="+filepath.Join(dir, "tmp"),
		"--exclude=test/**", "node", "--test")
	pages, err := filepath.Glob(filepath.Join(out, "*", "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(out, "*", "*", "*.html"))
	n := 1 + len(pages) + len(more) // index.html, then folders and files
	pdf := convertOK(t, sharedManager(t), siteJobFor(t, out, "index.html", "istanbul", report.ScopeSite))
	titles := testfixture.PDFOutline(t, pdf)
	if len(titles) != n {
		t.Errorf("outline has %d entries, the report %d pages: %q", len(titles), n, titles)
	}
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "function add(a, b)", "function shout(s)", "math.js", "str.js")
}
