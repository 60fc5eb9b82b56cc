package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// siteFigures generates a coverage.py HTML report of modules generated
// Python modules (Debian's python3-coverage) and prints the time of its
// entry PDF and of its scope=site PDF (every page, merged with an
// outline), n times each, every run a fresh report (no cache hit).
func siteFigures(m *convert.Manager, work string, modules, n int) error {
	cov, err := exec.LookPath("python3-coverage")
	if err != nil {
		return fmt.Errorf("python3-coverage is not installed: %w", err)
	}
	src := filepath.Join(work, "cov")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	var main strings.Builder
	for i := 1; i <= modules; i++ {
		body := fmt.Sprintf("def f%d(x):\n    if x > 0:\n        return x * 2\n    for i in range(3):\n        x += i\n    return x\n\n"+
			"class C%d:\n    def m(self):\n        return %d\n", i, i, i)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("mod%d.py", i)), []byte(body), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&main, "import mod%d; mod%d.f%d(1)\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(src, "main.py"), []byte(main.String()), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"run", "--source=.", "main.py"}, {"html", "-d", "out"}} {
		cmd := exec.Command(cov, args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("python3-coverage %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	dir := filepath.Join(src, "out")
	pages, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	files := func(_ context.Context, p string) (io.ReadCloser, string, error) {
		f, err := root.Open(filepath.FromSlash(p))
		if err != nil {
			return nil, "", err
		}
		return f, site.ContentType(p), nil
	}
	fmt.Printf("coverage.py site: %d modules, %d pages\n\n%-12s %4s %10s %10s %10s\n", modules, len(pages), "case", "n", "p50", "max", "PDF")
	id := int64(1 << 41)
	for _, scope := range []string{"", report.ScopeSite} {
		s := sample{name: "entry"}
		if scope != "" {
			s.name = "scope=site"
		}
		var size int64
		for range n {
			id++
			job := convert.Job{ReportID: id, Type: report.HTML, ContentKey: fmt.Sprintf("%064x", id),
				Print: report.PrintOptions{Scope: scope},
				Site:  &convert.Site{Entry: "index.html", Files: files, Generator: "coverage.py"}}
			start := time.Now()
			f, err := m.PDF(context.Background(), job)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.times = append(s.times, time.Since(start))
			if st, err := f.Stat(); err == nil {
				size = st.Size()
			}
			f.Close()
		}
		fmt.Printf("%-12s %4d %10s %10s %8.0fKB\n", s.name, n, ms(s.pct(0.5)), ms(s.pct(1)), float64(size)/1024)
	}
	return nil
}
