package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/report"
)

// largeMarkdownMemory converts one Markdown report of about size bytes and
// prints Chromium's memory (PSS of its process tree): the peak during the
// job, right after it, and after the idle memory check (10 s after the last
// job) has had its chance. It runs once: the point is the memory, not time.
func largeMarkdownMemory(m *convert.Manager, work string, size int) error {
	var b strings.Builder
	b.WriteString("# Large report\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Paragraph %d: the quick brown fox jumps over the lazy dog, and the report goes on and on.\n\n", i)
	}
	path := filepath.Join(work, "large.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return err
	}
	chromium := func() int64 { return m.EngineRSS()["chromium"] }
	before := chromium()
	var peak int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		f, err := m.PDF(context.Background(), convert.Job{ReportID: 1 << 40, Type: report.MD, Src: path,
			ContentKey: fmt.Sprintf("%064x", 1<<40)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "large markdown:", err)
			return
		}
		st, _ := f.Stat()
		f.Close()
		fmt.Printf("large markdown: %.1f MiB in, %.1f MiB PDF, %s\n",
			float64(b.Len())/(1<<20), float64(st.Size())/(1<<20), time.Since(start).Round(time.Millisecond))
	}()
	for running := true; running; {
		peak = max(peak, chromium())
		select {
		case <-done:
			running = false
		case <-time.After(100 * time.Millisecond):
		}
	}
	after := chromium()
	time.Sleep(15 * time.Second)
	fmt.Printf("chromium memory (PSS): before %s, peak during %s, right after %s, idle 15 s later %s\n",
		mib(before), mib(peak), mib(after), mib(chromium()))
	return nil
}
