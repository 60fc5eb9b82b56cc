package sitegen

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// GoCoverOf is GoCover's two-package module (coverage.html with
// coverage.out beside it) with calc_test.go's test body replaced by
// calcTest (Go statements over Add, Sub, Mul, Div), made once per name:
// for builds whose per-file coverage changes with their tests.
func GoCoverOf(t testing.TB, name, calcTest string) Site {
	t.Helper()
	return site(t, name, func(_ *gen, dir string) (Site, error) {
		return goCover(dir, "example.com/calc", map[string]string{
			"add.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int {\n" +
				"\tif a < b {\n\t\treturn -(b - a)\n\t}\n\treturn a - b\n}\n",
			"mul.go": "package calc\n\nfunc Mul(a, b int) int {\n\tr := 0\n\tfor i := 0; i < b; i++ {\n\t\tr += a\n\t}\n" +
				"\treturn r\n}\n\nfunc Div(a, b int) (int, bool) {\n\tif b == 0 {\n\t\treturn 0, false\n\t}\n\treturn a / b, true\n}\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestCalc(t *testing.T) {\n" + calcTest + "\n}\n",
			"strs/strs.go": "package strs\n\nimport \"strings\"\n\nfunc Shout(s string) string {\n\tif s == \"\" {\n" +
				"\t\treturn \"!\"\n\t}\n\treturn strings.ToUpper(s) + \"!\"\n}\n\nfunc Whisper(s string) string { return strings.ToLower(s) }\n",
			"strs/strs_test.go": "package strs\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n" +
				"\tif Shout(\"a\") != \"A!\" {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
		}, true)
	})
}

// MochaJUnitOf is mocha's run of spec (test/shop.spec.js) through mocha's
// built-in xunit reporter, made once per name: a site of a small
// index.html and junit/report.xml as mocha wrote it (JUnit XML; no
// summary figures in the page, so Want is empty).
func MochaJUnitOf(t testing.TB, name, spec string) Site {
	t.Helper()
	return site(t, name, func(_ *gen, dir string) (Site, error) {
		mocha, src, err := mochaProject(dir, spec)
		if err != nil {
			return Site{}, err
		}
		out := filepath.Join(dir, "junit-site")
		if err := os.MkdirAll(filepath.Join(out, "junit"), 0o755); err != nil {
			return Site{}, err
		}
		if _, err := run(src, nodeEnv, true, mocha, "--reporter", "xunit", "--reporter-option",
			"output="+filepath.Join(out, "junit", "report.xml"), "test/shop.spec.js"); err != nil {
			return Site{}, err
		}
		page := fmt.Sprintf("<!doctype html><html><head><title>%s</title></head><body><a href=\"junit/report.xml\">JUnit XML</a></body></html>\n", name)
		if err := os.WriteFile(filepath.Join(out, "index.html"), []byte(page), 0o644); err != nil {
			return Site{}, err
		}
		return Site{Dir: out, Entry: "index.html"}, exists(filepath.Join(out, "junit", "report.xml"))
	})
}
