// Package sitegen makes real HTML report sites for tests by running the
// real report generators on small inputs it writes: coverage.py
// (Debian's python3-coverage), c8 (istanbul's html reporter), Go's
// `go tool cover -html`, Playwright's HTML reporter, Allure 3 (from the
// allure-results of allure-playwright) and mochawesome. Each Site comes
// with the headline figures the tool itself reported, read from the
// tool's own machine-readable output (coverage.py's JSON report, c8's
// json-summary, `go tool cover -func`, Playwright's JSON reporter, the
// adapter's allure-results, mochawesome's JSON), never typed in by hand.
//
// The npm tools come from the folder scripts/install-deps.sh test fills
// (REPORTD_NPM, else ${XDG_CACHE_HOME:-$HOME/.cache}/reportd-npm); a tool
// that is missing fails the test with how to install it.
//
// Sites are made once per test binary when its TestMain calls Main, and
// removed when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(sitegen.Main(m)) }
//
// Without Main every call makes the site anew in the test's TempDir.
// A Site's files must not be changed: other tests share them.
package sitegen

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// Site is one generated report site.
type Site struct {
	// Dir is the site's root folder, as a team would upload it.
	Dir string
	// Entry is the page the site opens on, relative to Dir.
	Entry string
	// Files are the site's files, slash paths relative to Dir, sorted.
	Files []string
	// Want are the headline figures the generator itself reported:
	// line coverage in percent as the tool shows it, or the test counts
	// (Passed includes flaky tests, Failed includes Allure's broken), and
	// Flaky where the tool reports it for one run (Playwright: failed,
	// then passed on a retry).
	Want report.Summary
}

// Open opens a file of the site by its slash path (for detect.Site).
func (s Site) Open(name string) (io.ReadCloser, error) {
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("sitegen: bad path %q", name)
	}
	return os.Open(filepath.Join(s.Dir, filepath.FromSlash(name)))
}

// EntryPage is the content of the page the site opens on.
func (s Site) EntryPage(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(s.Entry)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gen is where sites are made, and what is already made there.
type gen struct {
	root string
	mu   sync.Mutex
	made map[string]*result
}

type result struct {
	once sync.Once
	site Site
	err  error
}

var shared *gen

// Main runs the tests with sites made once for the whole binary, and
// removes them afterwards. Call it from TestMain.
func Main(m *testing.M) int {
	root, err := os.MkdirTemp("", "sitegen-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sitegen:", err)
		return 1
	}
	shared = &gen{root: root, made: map[string]*result{}}
	code := m.Run()
	shared = nil
	if err := os.RemoveAll(root); err != nil {
		fmt.Fprintln(os.Stderr, "sitegen:", err)
	}
	return code
}

// site makes (or finds made) the site called name.
func site(t testing.TB, name string, mk func(g *gen, dir string) (Site, error)) Site {
	t.Helper()
	g := shared
	if g == nil {
		g = &gen{root: t.TempDir(), made: map[string]*result{}}
	}
	s, err := g.get(name, mk)
	if err != nil {
		t.Fatalf("sitegen %s: %v", name, err)
	}
	return s
}

func (g *gen) get(name string, mk func(g *gen, dir string) (Site, error)) (Site, error) {
	g.mu.Lock()
	r := g.made[name]
	if r == nil {
		r = &result{}
		g.made[name] = r
	}
	g.mu.Unlock()
	r.once.Do(func() {
		dir := filepath.Join(g.root, name)
		if r.err = os.MkdirAll(dir, 0o755); r.err != nil {
			return
		}
		r.site, r.err = mk(g, dir)
		if r.err == nil {
			r.site.Files, r.err = list(r.site.Dir)
		}
	})
	return r.site, r.err
}

// list is every file below dir, as sorted slash paths.
func list(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	slices.Sort(out)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("the generator wrote nothing to %s", dir)
	}
	return out, err
}

// write writes files (slash path → content) below dir.
func write(dir string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// run runs a command in dir; failing is an error unless mayFail (test
// runners exit non-zero when tests fail, which the sites want).
func run(dir string, env []string, mayFail bool, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, exit := err.(*exec.ExitError); !exit || !mayFail {
			return out, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	return out, nil
}

// exists fails when a file the tool should have written is not there.
func exists(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the generator did not write %s: %v", p, err)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
