package detect

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

type want struct {
	gen                     string
	lines                   float64 // -1: unknown
	passed, failed, skipped int64   // -1: unknown
}

func check(t *testing.T, gen string, s *report.Summary, w want) {
	t.Helper()
	if gen != w.gen {
		t.Fatalf("generator %q, want %q", gen, w.gen)
	}
	if s == nil {
		t.Fatalf("no summary, want %+v", w)
	}
	f := func(name string, p *float64, v float64) {
		t.Helper()
		switch {
		case v < 0 && p != nil:
			t.Errorf("%s = %v, want unknown", name, *p)
		case v >= 0 && p == nil:
			t.Errorf("%s unknown, want %v", name, v)
		case v >= 0 && *p != v:
			t.Errorf("%s = %v, want %v", name, *p, v)
		}
	}
	i := func(name string, p *int64, v int64) {
		t.Helper()
		var fp *float64
		if p != nil {
			x := float64(*p)
			fp = &x
		}
		f(name, fp, float64(v))
	}
	f("lines", s.Lines, w.lines)
	i("passed", s.Passed, w.passed)
	i("failed", s.Failed, w.failed)
	i("skipped", s.Skipped, w.skipped)
}

func TestTestdata(t *testing.T) {
	for file, w := range map[string]want{
		// Real output of Debian's python3-coverage 6.5.0 on a 5-statement module.
		"coveragepy-6.5.0-index.html": {CoveragePy, 80, -1, -1, -1},
		"istanbul-index.html":         {Istanbul, 87.5, -1, -1, -1},
		"jacoco-index.html":           {JaCoCo, 87.5, -1, -1, -1},
		"mochawesome.html":            {Mochawesome, -1, 4, 1, 1},
		"pytest-html-4.html":          {PytestHTML, -1, 5, 3, 2},
	} {
		t.Run(file, func(t *testing.T) {
			gen, s, err := File(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			check(t, gen, s, w)
		})
	}
}

// TestLiveCoveragePy runs coverage.py (Debian's python3-coverage, which
// scripts/install-deps.sh installs for tests) on a small module and reads
// the figure from the index.html it writes.
func TestLiveCoveragePy(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-m", "coverage", "--version").Run(); err != nil {
		t.Fatalf("coverage.py is not installed: run `bash scripts/install-deps.sh test` (it installs python3-coverage): %v", err)
	}
	dir := t.TempDir()
	// 8 statements, 7 run: 87.5%, shown as 88% (whole percent by default).
	src := "def f(x):\n    if x > 0:\n        return 1\n    return 2\n\nf(1)\nf(-1)\n\ndef g():\n    return 3\n"
	if err := os.WriteFile(filepath.Join(dir, "mod.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", "mod.py"}, {"html", "-d", "htmlcov"}} {
		cmd := exec.Command(py, append([]string{"-m", "coverage"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "COVERAGE_FILE="+filepath.Join(dir, ".coverage"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("coverage %v: %v\n%s", args, err, out)
		}
	}
	gen, s, err := File(filepath.Join(dir, "htmlcov", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, gen, s, want{CoveragePy, 88, -1, -1, -1})
}

// Files that are not a known generator's, or look like one but lack the
// figures, give no summary; a look-alike never gives a wrong one.
func TestUnknownAndBroken(t *testing.T) {
	for name, text := range map[string]string{
		"plain":                 "<html><body><h1>Hello</h1></body></html>",
		"pc_cov elsewhere":      `<p><span class="pc_cov">50%</span></p>`,
		"mochawesome broken":    `<body data-raw="{&quot;stats&quot;:{&quot;passes&quot;:`,
		"jacoco without lines":  `<a href="http://www.jacoco.org/jacoco">JaCoCo</a><table id="coveragetable"><thead><tr><td>Element</td><td>Cov.</td></tr></thead><tfoot><tr><td>Total</td><td>90%</td></tr></tfoot></table>`,
		"coverage.py over 100%": `coverage.py v7 <span class="pc_cov">180%</span>`,
	} {
		gen, s := Detect([]byte(text))
		if s != nil {
			t.Errorf("%s: %q %+v, want no summary", name, gen, s)
		}
	}
}
