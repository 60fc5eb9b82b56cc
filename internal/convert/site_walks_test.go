package convert

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// hostileSite writes a site of n pages, each linking to the next ones and
// asking for data every 50 ms forever: no page ever goes network-quiet, so
// each waits its whole bound before it prints.
func hostileSite(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"data.json": `{"ok":true}`}
	for i := range n {
		name := fmt.Sprintf("p%d.html", i)
		if i == 0 {
			name = "index.html"
		}
		var links strings.Builder
		for j := i + 1; j < min(n, i+4); j++ {
			fmt.Fprintf(&links, `<a href="p%d.html">p%d</a> `, j, j)
		}
		files[name] = fmt.Sprintf(`<title>P%d</title><p>hostile page %d</p>%s
<script>setInterval(() => fetch('data.json?' + Math.random()).catch(() => {}), 50)</script>`, i, i, links.String())
	}
	writeFiles(t, dir, files)
	return dir
}

// Three hostile site walks (pages that never go quiet) hold no slot for
// their whole walk: each page takes its own turn, walks use at most
// ChromiumTabs-1 slots, so another project's one-page PDF is printed
// meanwhile; a second walk of a report that is being walked is refused.
func TestSiteWalksShareTheEngine(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) {
		c.ChromiumTabs = 2
		c.JobTimeout = 8 * time.Second // a hostile page holds its slot for half of it
		c.SiteTimeout = 2 * time.Minute
	})
	dir := hostileSite(t, 60)
	walks := make([]Job, 3)
	errs := make(chan error, len(walks))
	for i := range walks {
		walks[i] = siteJobFor(t, dir, "index.html", "", report.ScopeSite)
		walks[i].ProjectID = 1
		go func(j Job) {
			f, err := m.PDF(context.Background(), j)
			if f != nil {
				f.Close()
			}
			errs <- err
		}(walks[i])
	}
	// All three walks are under way.
	waitUntil(t, 2*time.Minute, "three walks", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.walks) == 3
	})

	// Another print of a report being walked is refused, not queued behind it.
	again := walks[0]
	again.Print.Scale = 0.9
	_, err := m.PDF(testfixture.Ctx(t), again)
	if re := testfixture.WantKind(t, err, report.Unavailable); !strings.Contains(re.Message, "being printed already") {
		t.Errorf("message %q", re.Message)
	}

	// Another project's one-page PDF is served while the walks run.
	for i := range 3 {
		job := jobFor(t, report.HTML, fmt.Appendf(nil, "<p>quick %d</p>", i))
		job.ProjectID = 2
		start := time.Now()
		pdf := convertOK(t, m, job)
		took := time.Since(start)
		testfixture.WantText(t, testfixture.PDFText(t, pdf), fmt.Sprintf("quick %d", i))
		t.Logf("one-page PDF %d while three hostile walks run: %s", i, took)
		// Generous: a walk holding a slot for its whole budget would
		// make this wait minutes; a page's turn is 4 s.
		if took > 30*time.Second {
			t.Errorf("one-page PDF took %s while walks ran", took)
		}
	}
	select {
	case err := <-errs:
		t.Fatalf("a walk ended early: %v", err)
	default:
	}
}

// A walk that runs out of its budget of engine time (convert.site_timeout)
// fails naming the setting; its failure is the report's, so the same walk
// with other print options is answered from memory, not walked again.
func TestSiteWalkFailureIsTheReports(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.JobTimeout = 4 * time.Second; c.SiteTimeout = 5 * time.Second })
	dir := hostileSite(t, 20)
	job := siteJobFor(t, dir, "index.html", "", report.ScopeSite)
	var opens atomic.Int64
	files := job.Site.Files
	job.Site.Files = func(ctx context.Context, p string) (io.ReadCloser, string, error) {
		opens.Add(1)
		return files(ctx, p)
	}
	_, err := m.PDF(testfixture.Ctx(t), job)
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, "convert.site_timeout") {
		t.Fatalf("message %q does not name the setting", re.Message)
	}
	before := opens.Load()
	for _, scale := range []float64{0.9, 1.1} {
		other := job
		other.Print.Scale = scale
		_, err := m.PDF(testfixture.Ctx(t), other)
		if again := testfixture.WantKind(t, err, report.Conversion); again.Message != re.Message {
			t.Errorf("scale=%v: %q, want the remembered %q", scale, again.Message, re.Message)
		}
	}
	if n := opens.Load() - before; n != 0 {
		t.Errorf("the site was walked again (%d files read)", n)
	}
	// The entry print is not a walk: it is not refused.
	entry := job
	entry.Print = report.PrintOptions{}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, entry)), "hostile page 0")
}

// waitUntil polls cond until it holds or limit passes.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("no %s within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
