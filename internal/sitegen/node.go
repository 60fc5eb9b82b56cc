package sitegen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// NPMDir is the folder holding the npm report generators
// (scripts/install-deps.sh test installs them there): REPORTD_NPM, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/reportd-npm.
func NPMDir() string {
	if d := os.Getenv("REPORTD_NPM"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "reportd-npm")
}

// npmBin is an installed npm tool's executable, or why it is missing.
func npmBin(name string) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("node is not on PATH (bash scripts/install-deps.sh test installs it): %v", err)
	}
	p := filepath.Join(NPMDir(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed in %s (bash scripts/install-deps.sh test installs it): %v", name, NPMDir(), err)
	}
	return p, nil
}

// linkModules makes the npm folder's packages resolvable from a project
// folder (require, and tools that resolve from the config's folder).
func linkModules(dir string) error {
	return os.Symlink(filepath.Join(NPMDir(), "node_modules"), filepath.Join(dir, "node_modules"))
}

// nodeEnv keeps the tools quiet, colourless and off the network.
var nodeEnv = []string{"NO_COLOR=1", "FORCE_COLOR=0", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1", "NODE_OPTIONS="}

// C8 is c8's istanbul html report (the lcov-report tree: index.html, one
// page per folder and per source file) of a small JS project tested with
// node --test (two source folders, some functions never called), with
// the line figure of c8's json-summary reporter (total.lines.pct). The
// summary file is taken out of the site.
func C8(t testing.TB) Site {
	t.Helper()
	return site(t, "c8", func(_ *gen, dir string) (Site, error) {
		c8, err := npmBin("c8")
		if err != nil {
			return Site{}, err
		}
		src := filepath.Join(dir, "src")
		if err := write(src, map[string]string{
			"package.json": `{"name":"calc","version":"1.0.0","private":true}` + "\n",
			"math.js": "function add(a, b) { return a + b; }\nfunction sub(a, b) { return a - b; }\n" +
				"function div(a, b) {\n  if (b === 0) {\n    throw new Error('div by zero');\n  }\n  return a / b;\n}\n" +
				"module.exports = { add, sub, div };\n",
			"lib/str.js": "function up(s) { return s.toUpperCase(); }\nfunction low(s) { return s.toLowerCase(); }\n" +
				"function pad(s, n) {\n  while (s.length < n) {\n    s = ' ' + s;\n  }\n  return s;\n}\n" +
				"module.exports = { up, low, pad };\n",
			"test/calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n" +
				"const m = require('../math');\nconst s = require('../lib/str');\n" +
				"test('add', () => assert.strictEqual(m.add(1, 2), 3));\n" +
				"test('div', () => assert.strictEqual(m.div(4, 2), 2));\n" +
				"test('up', () => assert.strictEqual(s.up('a'), 'A'));\n" +
				"test('pad', () => assert.strictEqual(s.pad('a', 3), '  a'));\n",
		}); err != nil {
			return Site{}, err
		}
		out := filepath.Join(dir, "coverage")
		if _, err := run(src, nodeEnv, false, c8, "--reporter=html", "--reporter=json-summary",
			"--reports-dir="+out, "--temp-directory="+filepath.Join(dir, "tmp"), "--exclude=test/**",
			"node", "--test", "test/"); err != nil {
			return Site{}, err
		}
		summary := filepath.Join(dir, "coverage-summary.json")
		if err := os.Rename(filepath.Join(out, "coverage-summary.json"), summary); err != nil {
			return Site{}, err
		}
		var sum struct {
			Total struct{ Lines struct{ Pct *float64 } }
		}
		if err := readJSON(summary, &sum); err != nil {
			return Site{}, err
		}
		if sum.Total.Lines.Pct == nil {
			return Site{}, fmt.Errorf("c8 json-summary has no total.lines.pct")
		}
		return Site{Dir: out, Entry: "index.html", Want: report.Summary{Lines: sum.Total.Lines.Pct}}, exists(filepath.Join(out, "index.html"))
	})
}

// Mochawesome is mocha's run of a small suite (passes, failures, a
// pending test, a nested suite) through the mochawesome reporter:
// mochawesome.html (drawn by assets/app.js from the JSON in its body),
// assets/ and mochawesome.json, whose stats are the figures (Passed =
// passes, Failed = failures, Skipped = pending + skipped).
func Mochawesome(t testing.TB) Site {
	t.Helper()
	return MochawesomeOf(t, "mochawesome", mochaSpec)
}

// mochaSpec is Mochawesome's suite.
const mochaSpec = "const assert = require('node:assert');\n" +
	"describe('cart', function () {\n" +
	"  it('adds an item', () => assert.strictEqual([1].length, 1));\n" +
	"  it('totals prices', () => assert.strictEqual(2 + 2, 4));\n" +
	"  it('applies a coupon', () => assert.strictEqual(10 * 0.9, 8));\n" +
	"  it.skip('ships abroad', () => {});\n" +
	"  describe('checkout', function () {\n" +
	"    it('pays', () => assert.ok(true));\n" +
	"    it('sends a receipt', () => { throw new Error('mail server down'); });\n" +
	"  });\n" +
	"});\n"

// MochawesomeOf is mocha's run of spec (the JavaScript of test/shop.spec.js)
// through the mochawesome reporter, made once per name: what Mochawesome
// makes, for suites a test writes (a test that flips between builds).
func MochawesomeOf(t testing.TB, name, spec string) Site {
	t.Helper()
	return site(t, name, func(_ *gen, dir string) (Site, error) {
		mocha, src, err := mochaProject(dir, spec)
		if err != nil {
			return Site{}, err
		}
		out := filepath.Join(dir, "mochawesome-report")
		if _, err := run(src, nodeEnv, true, mocha, "--reporter", "mochawesome", "--reporter-options",
			"reportDir="+out+",reportFilename=mochawesome,json=true,html=true,quiet=true", "test/shop.spec.js"); err != nil {
			return Site{}, err
		}
		var res struct {
			Stats struct{ Passes, Failures, Pending, Skipped *int64 }
		}
		if err := readJSON(filepath.Join(out, "mochawesome.json"), &res); err != nil {
			return Site{}, err
		}
		st := res.Stats
		if st.Passes == nil || st.Failures == nil || st.Pending == nil || st.Skipped == nil {
			return Site{}, fmt.Errorf("mochawesome.json: stats incomplete: %+v", st)
		}
		return Site{Dir: out, Entry: "mochawesome.html", Want: report.Summary{
			Passed: st.Passes, Failed: st.Failures, Skipped: ptr(*st.Pending + *st.Skipped),
		}}, exists(filepath.Join(out, "mochawesome.html"))
	})
}

// Tool is the executable of an npm tool installed where the generators
// are (NPMDir), or an error saying how to install it: tests that run one
// (Lighthouse) fail rather than skip without it.
func Tool(name string) (string, error) { return npmBin(name) }

// mochaProject writes spec as test/shop.spec.js of a project in dir/src
// with the pinned node modules linked in, and finds mocha.
func mochaProject(dir, spec string) (mocha, src string, err error) {
	if mocha, err = npmBin("mocha"); err != nil {
		return "", "", err
	}
	src = filepath.Join(dir, "src")
	if err := write(src, map[string]string{"test/shop.spec.js": spec}); err != nil {
		return "", "", err
	}
	return mocha, src, linkModules(src)
}
