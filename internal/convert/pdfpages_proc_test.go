package convert

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// pageRanges of a stored PDF runs pdfcpu over an uploaded file: it waits for
// a slot of the conversion gate like any job, refuses files over
// TrimMaxBytes, and a page selection still running at the job's deadline is
// killed (its child process stands in for a PDF that keeps pdfcpu busy).
func TestPDFPageRangesAreGatedAndBounded(t *testing.T) {
	sample := fixture(t, "sample.pdf")
	quiet := func(m *Manager) { m.startOnce.Do(func() {}) } // no engine is needed

	t.Run("size cap", func(t *testing.T) {
		m := newManager(t, func(c *Config) { c.TrimMaxBytes = int64(len(sample)) - 1 })
		quiet(m)
		_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.PDF, sample, "pageRanges=1"))
		if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "too large") {
			t.Errorf("message %q", re.Message)
		}
	})

	t.Run("gate", func(t *testing.T) {
		m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
		quiet(m)
		leave, err := m.chrome.Gate().Enter(testfixture.Ctx(t), 99) // another project's job holds the only slot
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			f, err := m.PDF(testfixture.Ctx(t), printJob(t, report.PDF, sample, "pageRanges=1"))
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			leave()
			t.Fatalf("the page selection ran while the gate was full (err %v)", err)
		case <-time.After(700 * time.Millisecond):
		}
		leave()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("after the slot was freed: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the page selection never ran after the slot was freed")
		}
	})

	t.Run("deadline", func(t *testing.T) {
		t.Setenv(trimChildStall, "600000") // the child inherits it and never finishes
		m := newManager(t, func(c *Config) { c.JobTimeout = time.Second })
		quiet(m)
		start := time.Now()
		ctx, cancel := context.WithTimeout(testfixture.Ctx(t), 30*time.Second)
		defer cancel()
		_, err := m.PDF(ctx, printJob(t, report.PDF, sample, "pageRanges=1"))
		if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "longer than 1s") {
			t.Errorf("message %q", re.Message)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the stalled page selection ended after %s, want about the 1s deadline", d)
		}
	})
}
