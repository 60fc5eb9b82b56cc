package convert

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

const hangHTML = `<p>%d</p><script>while (true) {}</script>`

// Project A's hanging reports queue up; project B's report, queued after
// them, is served as soon as the one running job ends, not after all of A's.
func TestQueueServesOtherProjectFirst(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 5 * time.Second })
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>warm</p>")))
	var mu sync.Mutex
	var done []string
	var wg sync.WaitGroup
	run := func(name string, job Job) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := m.PDF(testfixture.Ctx(t), job)
			if err == nil {
				f.Close()
			}
			mu.Lock()
			done = append(done, fmt.Sprintf("%s:%v", name, err == nil))
			mu.Unlock()
		}()
	}
	for i := range 3 {
		job := jobFor(t, report.HTML, fmt.Appendf(nil, hangHTML, i))
		job.ProjectID = 1
		run(fmt.Sprint("A", i), job)
		waitQueued(t, m.chrome.Gate(), max(0, i)) // A0 runs, A1 and A2 wait
	}
	job := jobFor(t, report.HTML, []byte("<p>project B</p>"))
	job.ProjectID = 2
	run("B", job)
	waitQueued(t, m.chrome.Gate(), 3)
	wg.Wait()
	if len(done) != 4 || done[1] != "B:true" {
		t.Fatalf("completion order %v: B should finish second, right after the running A job", done)
	}
}

// A report that failed is answered from memory: the same error, no second
// conversion, until the report is forgotten (changed or deleted).
func TestFailedConversionIsRemembered(t *testing.T) {
	testfixture.NeedChromium(t)
	reg := prometheus.NewRegistry()
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 3 * time.Second; c.Registerer = reg })
	job := jobFor(t, report.HTML, fmt.Appendf(nil, hangHTML, 0))
	attempts := func() float64 { return testutil.ToFloat64(m.met.Conversions().WithLabelValues("html", "error")) }

	_, first := m.PDF(testfixture.Ctx(t), job)
	testfixture.WantKind(t, first, report.Conversion)
	_, second := m.PDF(testfixture.Ctx(t), job)
	if !errors.Is(second, first) && second.Error() != first.Error() {
		t.Errorf("second error %v, want %v", second, first)
	}
	if n := attempts(); n != 1 {
		t.Fatalf("%v conversions ran, want 1", n)
	}
	if err := m.Forget(job.ReportID); err != nil {
		t.Fatal(err)
	}
	_, third := m.PDF(testfixture.Ctx(t), job)
	testfixture.WantKind(t, third, report.Conversion)
	if n := attempts(); n != 2 {
		t.Fatalf("%v conversions ran after Forget, want 2", n)
	}
}
