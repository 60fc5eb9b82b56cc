package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// hostileWalks measures another project's one-page HTML PDF while walks
// hostile site walks (scope=site of a 60-page site whose pages never go
// network-quiet: each asks for data every 50 ms) run on the same engines
// with the default settings: p50/p95/max of n one-page PDFs, each a fresh
// report (no cache hit), each given at most limit (a request past it is
// counted at limit and the figure says so).
func hostileWalks(m *convert.Manager, work string, walks, n int, limit time.Duration) error {
	dir := filepath.Join(work, "hostile")
	const pages = 60
	for i := range pages {
		name := fmt.Sprintf("p%d.html", i)
		if i == 0 {
			name = "index.html"
		}
		var links strings.Builder
		for j := i + 1; j < min(pages, i+4); j++ {
			fmt.Fprintf(&links, `<a href="p%d.html">p%d</a> `, j, j)
		}
		body := fmt.Sprintf(`<title>P%d</title><p>hostile page %d</p>%s
<script>setInterval(() => fetch('data.json?' + Math.random()).catch(() => {}), 50)</script>`, i, i, links.String())
		if err := writeFile(filepath.Join(dir, name), body); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(dir, "data.json"), `{"ok":true}`); err != nil {
		return err
	}
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id := int64(1 << 42)
	for range walks {
		id++
		job := convert.Job{ReportID: id, ProjectID: 1, Type: report.HTML, ContentKey: fmt.Sprintf("%064x", id),
			Print: report.PrintOptions{Scope: report.ScopeSite},
			Site:  &convert.Site{Entry: "index.html", Files: files}}
		go func() {
			if f, err := m.PDF(ctx, job); err == nil {
				f.Close()
			}
		}()
	}
	time.Sleep(3 * time.Second) // the walks are under way
	s := sample{name: "one-page"}
	late := 0
	for i := range n {
		id++
		src := filepath.Join(work, fmt.Sprintf("quick-%d.html", i))
		if err := writeFile(src, fmt.Sprintf("<p>one line %d</p>", i)); err != nil {
			return err
		}
		job := convert.Job{ReportID: id, ProjectID: 2, Type: report.HTML, Src: src, ContentKey: fmt.Sprintf("%064x", id)}
		rctx, rcancel := context.WithTimeout(ctx, limit)
		start := time.Now()
		f, err := m.PDF(rctx, job)
		took := time.Since(start)
		rcancel()
		if err != nil {
			if rctx.Err() == nil {
				return fmt.Errorf("one-page PDF: %w", err)
			}
			late++
			took = limit
		} else {
			f.Close()
		}
		s.times = append(s.times, took)
		time.Sleep(200 * time.Millisecond)
	}
	note := ""
	if late > 0 {
		note = fmt.Sprintf(" (%d of %d gave up at %s)", late, n, limit)
	}
	fmt.Printf("one-page HTML PDF of another project while %d hostile site walks run (60 pages each, never network-quiet; default settings):\n", walks)
	fmt.Printf("%-12s %4s %10s %10s %10s\n", "case", "n", "p50", "p95", "max")
	fmt.Printf("%-12s %4d %10s %10s %10s%s\n", s.name, n, ms(s.pct(0.5)), ms(s.pct(0.95)), ms(s.pct(1)), note)
	return nil
}

// openLinks renders a Markdown report of `[a](` repeated to about size
// bytes, the shape goldmark scanned to the end of the line once per link:
// the time of its HTML (MarkdownHTML) and of its whole PDF, n times each.
func openLinks(m *convert.Manager, work string, size, n int) error {
	src := bytes.Repeat([]byte("[a]("), size/4)
	path := filepath.Join(work, "open-links.md")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		return err
	}
	fmt.Printf("Markdown of \"[a](\" repeated, %d KB:\n%-12s %4s %10s %10s\n", len(src)/1000, "case", "n", "p50", "max")
	id := int64(1 << 43)
	for _, what := range []string{"html", "pdf"} {
		s := sample{name: what}
		for range n {
			id++
			job := convert.Job{ReportID: id, ProjectID: 3, Type: report.MD, Src: path, ContentKey: fmt.Sprintf("%064x", id)}
			start := time.Now()
			if what == "html" {
				if _, err := m.MarkdownHTML(context.Background(), job); err != nil {
					return fmt.Errorf("open links html: %w", err)
				}
			} else {
				f, err := m.PDF(context.Background(), job)
				if err != nil {
					return fmt.Errorf("open links pdf: %w", err)
				}
				f.Close()
			}
			s.times = append(s.times, time.Since(start))
		}
		fmt.Printf("%-12s %4d %10s %10s\n", s.name, n, ms(s.pct(0.5)), ms(s.pct(1)))
	}
	return nil
}

func writeFile(name, text string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(text), 0o644)
}
