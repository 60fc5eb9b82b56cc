package sitegen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// python is Debian's interpreter, where python3-coverage installs.
const python = "/usr/bin/python3"

// CoveragePy is coverage.py's htmlcov/ of a small package (three modules,
// some lines never run), with the total coverage.py's JSON report gives
// (totals.percent_covered_display, the figure its HTML header shows).
func CoveragePy(t testing.TB) Site {
	t.Helper()
	return CoveragePyOf(t, "coveragepy", coveragePyMain)
}

// coveragePyMain is CoveragePy's main.py.
const coveragePyMain = "from shapes import square, circle\nfrom shapes.names import name\n\n" +
	"assert square(3) == 9\nassert circle(1) > 3\nassert name(4) == 'square'\nassert name(5) == 'polygon'\n"

// CoveragePyOf is CoveragePy's package run by mainPy (the script that
// exercises it), made once per name: coverage moves with what mainPy calls.
func CoveragePyOf(t testing.TB, name, mainPy string) Site {
	t.Helper()
	return site(t, name, func(_ *gen, dir string) (Site, error) {
		if out, err := run(dir, nil, false, python, "-m", "coverage", "--version"); err != nil {
			return Site{}, fmt.Errorf("coverage.py is not installed (bash scripts/install-deps.sh test installs python3-coverage): %v\n%s", err, out)
		}
		src := filepath.Join(dir, "src")
		if err := write(src, map[string]string{
			"shapes/__init__.py": "from .area import square, circle\n",
			"shapes/area.py": "import math\n\n\ndef square(a):\n    return a * a\n\n\ndef circle(r):\n    if r < 0:\n" +
				"        raise ValueError('negative radius')\n    return math.pi * r * r\n",
			"shapes/names.py": "def name(sides):\n    if sides == 3:\n        return 'triangle'\n    if sides == 4:\n" +
				"        return 'square'\n    return 'polygon'\n\n\ndef unused():\n    return [name(n) for n in range(10)]\n",
			"main.py": mainPy,
		}); err != nil {
			return Site{}, err
		}
		env := []string{"COVERAGE_FILE=" + filepath.Join(src, ".coverage")}
		for _, args := range [][]string{
			{"run", "--source=.", "main.py"},
			{"html", "-d", filepath.Join(dir, "htmlcov")},
			{"json", "-o", filepath.Join(src, "coverage.json")},
		} {
			if _, err := run(src, env, false, python, append([]string{"-m", "coverage"}, args...)...); err != nil {
				return Site{}, err
			}
		}
		var cov struct {
			Totals struct {
				Display string `json:"percent_covered_display"`
			}
		}
		if err := readJSON(filepath.Join(src, "coverage.json"), &cov); err != nil {
			return Site{}, err
		}
		pct, err := strconv.ParseFloat(cov.Totals.Display, 64)
		if err != nil {
			return Site{}, fmt.Errorf("coverage.json totals: %v", err)
		}
		return Site{Dir: filepath.Join(dir, "htmlcov"), Entry: "index.html", Want: report.Summary{Lines: &pct}}, nil
	})
}

// GoCover is a site of `go tool cover -html=coverage.out -o coverage.html`
// for a module of two packages (three files, some statements never run),
// with coverage.out beside the page, and the total `go tool cover -func`
// prints.
func GoCover(t testing.TB) Site {
	t.Helper()
	return site(t, "gocover", func(_ *gen, dir string) (Site, error) {
		return goCover(dir, "example.com/calc", map[string]string{
			"add.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int {\n" +
				"\tif a < b {\n\t\treturn -(b - a)\n\t}\n\treturn a - b\n}\n",
			"mul.go": "package calc\n\nfunc Mul(a, b int) int {\n\tr := 0\n\tfor i := 0; i < b; i++ {\n\t\tr += a\n\t}\n" +
				"\treturn r\n}\n\nfunc Div(a, b int) (int, bool) {\n\tif b == 0 {\n\t\treturn 0, false\n\t}\n\treturn a / b, true\n}\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestCalc(t *testing.T) {\n" +
				"\tif Add(1, 2) != 3 || Mul(2, 3) != 6 || Sub(5, 3) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
			"strs/strs.go": "package strs\n\nimport \"strings\"\n\nfunc Shout(s string) string {\n\tif s == \"\" {\n" +
				"\t\treturn \"!\"\n\t}\n\treturn strings.ToUpper(s) + \"!\"\n}\n\nfunc Whisper(s string) string { return strings.ToLower(s) }\n",
			"strs/strs_test.go": "package strs\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n" +
				"\tif Shout(\"a\") != \"A!\" {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
		}, true)
	})
}

// GoCoverOneFile is `go tool cover -html` of a one-file package, alone
// (no profile in the site): the page's only file figure is the total.
func GoCoverOneFile(t testing.TB) Site {
	t.Helper()
	return site(t, "gocover1", func(_ *gen, dir string) (Site, error) {
		return goCover(dir, "example.com/one", map[string]string{
			"one.go": "package one\n\nfunc Sign(x int) int {\n\tswitch {\n\tcase x > 0:\n\t\treturn 1\n\tcase x < 0:\n" +
				"\t\treturn -1\n\t}\n\treturn 0\n}\n",
			"one_test.go": "package one\n\nimport \"testing\"\n\nfunc TestSign(t *testing.T) {\n" +
				"\tif Sign(3) != 1 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
		}, false)
	})
}

// GoCoverPage is `go tool cover -html` alone (one cover.html, as people
// make it; no profile in the site) of a module of two packages written to
// exercise how cmd/cover counts statements: switch and type switch
// clauses, select, else-if chains, function literals, labeled loops,
// defer and go statements, some never run.
func GoCoverPage(t testing.TB) Site {
	t.Helper()
	return site(t, "gocoverpage", func(_ *gen, dir string) (Site, error) {
		return goCover(dir, "example.com/shapes", map[string]string{
			"shapes.go": `package shapes

import "fmt"

type Shape interface{ Area() float64 }

type Rect struct{ W, H float64 }

func (r Rect) Area() float64 { return r.W * r.H }

type Circle struct{ R float64 }

func (c Circle) Area() float64 { return 3.14159 * c.R * c.R }

func Describe(s any) string {
	switch v := s.(type) {
	case Rect:
		if v.W == v.H {
			return "square"
		} else if v.W > v.H {
			return "wide"
		} else {
			return "tall"
		}
	case Circle:
		return fmt.Sprintf("circle %.1f", v.R)
	default:
		return "unknown"
	}
}

func Sum(shapes []Shape) (total float64) {
	defer func() {
		if total < 0 {
			total = 0
		}
	}()
outer:
	for i, s := range shapes {
		for j := 0; j < i; j++ {
			if shapes[j] == s {
				continue outer
			}
		}
		total += s.Area()
	}
	return total
}
`,
			"shapes_test.go": `package shapes

import "testing"

func TestShapes(t *testing.T) {
	if Describe(Rect{2, 2}) != "square" || Describe(Rect{3, 1}) != "wide" {
		t.Fatal("describe")
	}
	if Sum([]Shape{Rect{1, 2}, Rect{1, 2}, Circle{1}}) <= 2 {
		t.Fatal("sum")
	}
}
`,
			"work/work.go": `package work

// Fan runs f on each item in its own goroutine and collects the results.
func Fan(items []int, f func(int) int) []int {
	out := make(chan int)
	for _, it := range items {
		go func(x int) { out <- f(x) }(it)
	}
	res := make([]int, 0, len(items))
	for range items {
		select {
		case v := <-out:
			res = append(res, v)
		}
	}
	return res
}

// Wait gives up when done closes first.
func Wait(c, done chan int) (int, bool) {
	select {
	case v := <-c:
		return v, true
	case <-done:
		return 0, false
	}
}
`,
			"work/work_test.go": `package work

import "testing"

func TestFan(t *testing.T) {
	if len(Fan([]int{1, 2, 3}, func(x int) int { return x * x })) != 3 {
		t.Fatal("fan")
	}
}
`,
		}, false)
	})
}

func goCover(dir, module string, files map[string]string, withProfile bool) (Site, error) {
	src := filepath.Join(dir, "src")
	files["go.mod"] = "module " + module + "\n\ngo 1.22\n"
	if err := write(src, files); err != nil {
		return Site{}, err
	}
	// go test puts its own GOROOT/bin first on PATH.
	goBin := "go"
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOCOVERDIR="}
	prof := filepath.Join(src, "coverage.out")
	siteDir := filepath.Join(dir, "site")
	page := filepath.Join(siteDir, "coverage.html")
	if err := os.MkdirAll(siteDir, 0o755); err != nil {
		return Site{}, err
	}
	if _, err := run(src, env, false, goBin, "test", "-coverprofile="+prof, "./..."); err != nil {
		return Site{}, err
	}
	if _, err := run(src, env, false, goBin, "tool", "cover", "-html="+prof, "-o", page); err != nil {
		return Site{}, err
	}
	out, err := run(src, env, false, goBin, "tool", "cover", "-func="+prof)
	if err != nil {
		return Site{}, err
	}
	// The last line: "total:\t\t\t(statements)\t63.6%".
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != 3 || f[0] != "total:" {
		return Site{}, fmt.Errorf("go tool cover -func: no total in\n%s", out)
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(f[2], "%"), 64)
	if err != nil {
		return Site{}, fmt.Errorf("go tool cover -func total: %v", err)
	}
	if withProfile {
		b, err := os.ReadFile(prof)
		if err != nil {
			return Site{}, err
		}
		if err := os.WriteFile(filepath.Join(siteDir, "coverage.out"), b, 0o644); err != nil {
			return Site{}, err
		}
	}
	return Site{Dir: siteDir, Entry: "coverage.html", Want: report.Summary{Lines: &pct}}, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
