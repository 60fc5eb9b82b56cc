package convert

import (
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// A page whose Web Workers allocate memory without end is stopped while
// its job runs, at convert.max_worker_rss, not only checked after it: the
// job fails with a ConversionError naming the setting, and the same
// browser prints the next job.
func TestMemoryCapDuringJob(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.MaxWorkerRSS = 400 << 20 })
	hog := []byte(`<p>memory hog</p><script>
const src = "const a = []; setInterval(() => { for (let i = 0; i < 20; i++) a.push(new Array(250000).fill(Math.random())) }, 20)";
for (let i = 0; i < 4; i++) new Worker(URL.createObjectURL(new Blob([src])));
</script>`)
	job := jobFor(t, report.HTML, hog)
	// The page waits for an element that never comes (half the job's
	// deadline, a minute): the workers grow meanwhile.
	job.Print.WaitForSelector = "#never"
	warm := convertOK(t, m, jobFor(t, report.HTML, []byte("<p>warm</p>")))
	testfixture.WantText(t, testfixture.PDFText(t, warm), "warm")
	browser, _ := m.chrome.Supervisor().Current()

	start := time.Now()
	_, err := m.PDF(testfixture.Ctx(t), job)
	took := time.Since(start)
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, "convert.max_worker_rss") {
		t.Errorf("message %q does not name the setting", re.Message)
	}
	t.Logf("stopped after %s: %s", took, re.Message)
	if took > 45*time.Second { // generous: the wait it was in runs a minute
		t.Errorf("the job ran %s: it was not stopped while it ran", took)
	}

	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.HTML, []byte("<p>after the hog</p>")))), "after the hog")
	cur, _ := m.chrome.Supervisor().Current()
	same := cur == browser
	if !same || m.chrome.Restarts() != 0 {
		t.Errorf("the browser was replaced (restarts %d): only the job's renderer should stop", m.chrome.Restarts())
	}
}
