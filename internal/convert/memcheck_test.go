package convert

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// largeMarkdown is a Markdown report of more than n bytes of plain paragraphs.
func largeMarkdown(n int) []byte {
	var b strings.Builder
	b.WriteString("# Large report\n\n")
	for i := 0; b.Len() <= n; i++ {
		fmt.Fprintf(&b, "Paragraph %d: the quick brown fox jumps over the lazy dog, and the report goes on and on.\n\n", i)
	}
	b.WriteString("The last paragraph.\n")
	return []byte(b.String())
}

// A large job is followed by a memory check at once (in the background),
// not at the 8th job: over the bound, the browser is replaced, and the next
// job still converts.
func TestChromiumMemoryCheckedAfterLargeJob(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.MaxWorkerRSS = 64 << 20 })
	m.chrome.Supervisor().Policy.IdleAfter = 0 // the idle check is another test's
	m.chrome.Supervisor().MemCap = nil         // and the cap during jobs (memcap_test.go)
	// A lower bar than the default 1 MiB keeps the "large" job a few seconds
	// of work on a loaded machine; the path is the same.
	m.chrome.SetLargeJob(128 << 10)
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.MD, []byte("# small\n\nfirst")))), "first")
	if n := m.chrome.Restarts(); n != 0 {
		t.Fatalf("restarts after a small job = %d, want 0", n)
	}
	big := largeMarkdown(m.chrome.LargeJob() + 1)
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.MD, big))), "The last paragraph.")
	// The measure runs beside the next jobs (engine.Supervisor.MeasureAsync),
	// not before the answer: wait for it, with a generous bound.
	for deadline := time.Now().Add(30 * time.Second); m.chrome.Restarts() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := m.chrome.Restarts(); n != 1 {
		t.Fatalf("restarts after a large job over the memory bound = %d, want 1", n)
	}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.MD, []byte("# small\n\nafter")))), "after")
}

// A browser left idle over the memory bound is replaced without waiting for
// more jobs, and the next job converts on its successor.
func TestChromiumMemoryCheckedWhenIdle(t *testing.T) {
	testfixture.NeedChromium(t)
	reg := prometheus.NewRegistry()
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.MaxWorkerRSS = 64 << 20; c.Registerer = reg })
	m.chrome.Supervisor().Policy.IdleAfter = 50 * time.Millisecond
	m.chrome.Supervisor().MemCap = nil // the cap during jobs is another test's (memcap_test.go)
	convertOK(t, m, jobFor(t, report.MD, []byte("# small\n\nfirst")))
	ctx := testfixture.Ctx(t)
	for m.chrome.Restarts() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the idle browser over the memory bound was never replaced")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if got := testutil.ToFloat64(m.met.Restarts().WithLabelValues("chromium", "memory")); got != 1 {
		t.Errorf("reportd_pdf_engine_restarts_total{engine=chromium,reason=memory} = %v, want 1", got)
	}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.MD, []byte("# small\n\nafter")))), "after")
}
