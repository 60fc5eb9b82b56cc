package convert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/testfixture"
)

// dirFiles serves a site from a real directory, confined to it (os.Root),
// with the content types of the site package's table.
func dirFiles(t *testing.T, dir string) SiteFiles {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return func(_ context.Context, p string) (io.ReadCloser, string, error) {
		f, err := root.Open(filepath.FromSlash(p))
		if err != nil {
			return nil, "", err
		}
		if fi, err := f.Stat(); err != nil || fi.IsDir() {
			f.Close()
			return nil, "", os.ErrNotExist
		}
		return f, site.ContentType(p), nil
	}
}

// siteJobFor is a site job over dir, with a fresh report id.
func siteJobFor(t *testing.T, dir, entry, generator, scope string) Job {
	t.Helper()
	id := 1000 + nextID.Add(1)
	sum := sha256.Sum256([]byte(dir + "\x00" + strconv.FormatInt(id, 10)))
	return Job{ReportID: id, Type: report.HTML, ContentKey: hex.EncodeToString(sum[:]),
		Print: report.PrintOptions{Scope: scope},
		Site:  &Site{Entry: entry, Files: dirFiles(t, dir), Generator: generator}}
}

// writeFiles writes name → text under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Links are followed breadth first in document order, without fragments
// and queries, deduplicated, on the site's origin only, pages only; a
// linked page that is missing is skipped.
func TestSiteLinksBreadthFirst(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<title>Start</title><p>page one</p>
<a href="b.html#x">b</a> <a href="sub/c.html?q=1">c</a> <a href="b.html">b again</a>
<a href="style.css">css</a> <a href="https://example.com/d.html">outside</a> <a href="missing.html">gone</a>
<a href="#top">top</a>`,
		"b.html":        `<title>Bee</title><p>page two</p><a href="index.html">home</a> <a href="e.html">e</a>`,
		"sub/c.html":    `<p>page three</p><a href="../b.html">b</a>`,
		"e.html":        `<title>Eee</title><p>page four</p><a href="über uns.html">about</a>`,
		"über uns.html": `<title>Über</title><p>page five</p>`,
		"style.css":     `p{color:black}`,
	})
	m := sharedManager(t)
	pdf := convertOK(t, m, siteJobFor(t, dir, "index.html", "", report.ScopeSite))
	got := fmt.Sprint(testfixture.PDFOutline(t, pdf))
	if want := fmt.Sprint([]string{"Start", "Bee", "sub/c.html", "Eee", "Über"}); got != want {
		t.Errorf("outline %s, want %s", got, want)
	}
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "page one", "page two", "page three", "page four", "page five")

	entry := convertOK(t, m, siteJobFor(t, dir, "index.html", "", ""))
	if text := testfixture.PDFText(t, entry); bytes.Contains([]byte(text), []byte("page two")) {
		t.Errorf("the entry PDF holds another page:\n%s", text)
	}
}

// The page cap (Config.SiteMaxPages) stops the walk.
func TestSiteMaxPages(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 5 {
		files[fmt.Sprintf("p%d.html", i)] = fmt.Sprintf(`<title>P%d</title><a href="p%d.html">next</a>`, i, i+1)
	}
	writeFiles(t, dir, files)
	m := newManager(t, func(c *Config) { c.SiteMaxPages = 2 })
	got := fmt.Sprint(testfixture.PDFOutline(t, convertOK(t, m, siteJobFor(t, dir, "p0.html", "", report.ScopeSite))))
	if want := fmt.Sprint([]string{"P0", "P1"}); got != want {
		t.Errorf("outline %s, want %s", got, want)
	}
}

// A whole site job has a deadline of its own (Config.SiteTimeout), besides
// each page's: past it the job fails with a message naming the setting.
func TestSiteTimeout(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("p%d.html", i)] = fmt.Sprintf(`<title>P%d</title><a href="p%d.html">next</a>`, i, i+1)
	}
	writeFiles(t, dir, files)
	m := newManager(t, func(c *Config) { c.SiteTimeout = 300 * time.Millisecond })
	_, err := m.PDF(testfixture.Ctx(t), siteJobFor(t, dir, "p0.html", "", report.ScopeSite))
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, "convert.site_timeout") {
		t.Errorf("message %q does not name convert.site_timeout", re.Message)
	}
}

// A missing entry page is a clear error, not an empty PDF.
func TestSiteMissingEntry(t *testing.T) {
	testfixture.NeedChromium(t)
	_, err := sharedManager(t).PDF(testfixture.Ctx(t), siteJobFor(t, t.TempDir(), "index.html", "", ""))
	re := testfixture.WantKind(t, err, report.Conversion)
	if !bytes.Contains([]byte(re.Message), []byte("index.html")) {
		t.Errorf("message %q does not name the entry", re.Message)
	}
}

// Both scopes are cached, each under its own key: a repeat reads no file
// of the site, and the site scope is not answered with the entry's PDF.
func TestSiteCachedPerScope(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<title>One</title><p>first</p><a href="two.html">two</a>`,
		"two.html":   `<title>Two</title><p>second</p>`,
	})
	m := sharedManager(t)
	job := siteJobFor(t, dir, "index.html", "", "")
	var reads atomic.Int64
	files := job.Site.Files
	job.Site.Files = func(ctx context.Context, p string) (io.ReadCloser, string, error) {
		reads.Add(1)
		return files(ctx, p)
	}
	entry := convertOK(t, m, job)
	n := reads.Load()
	if n == 0 {
		t.Fatal("the entry was printed without reading the site")
	}
	if again := convertOK(t, m, job); !bytes.Equal(again, entry) || reads.Load() != n {
		t.Errorf("the repeat was not answered from the cache (%d reads, %d before)", reads.Load(), n)
	}
	job.Print.Scope = report.ScopeSite
	all := convertOK(t, m, job)
	if reads.Load() == n {
		t.Error("scope=site was answered from the entry's cache file")
	}
	if got := testfixture.PDFOutline(t, all); len(got) != 2 {
		t.Errorf("outline %q, want two pages", got)
	}
	n = reads.Load()
	convertOK(t, m, job)
	if reads.Load() != n {
		t.Error("the repeat of scope=site was not answered from the cache")
	}
}

// A page that draws late (after a timer too long for the script settle to
// wait for) is printed once the request's waitForSelector matches, or the
// ready selector of its generator.
func TestSiteWaitsForSelectors(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<!DOCTYPE html><title>Late</title><div id="report"></div>
<script>setTimeout(() => { document.getElementById("report").innerHTML = '<p id="done">drawn late</p>'; }, 2500);</script>`,
	})
	m := sharedManager(t)
	job := siteJobFor(t, dir, "index.html", "", "")
	if text := testfixture.PDFText(t, convertOK(t, m, job)); bytes.Contains([]byte(text), []byte("drawn late")) {
		t.Skip("the page drew before the print without any wait; the machine is too slow for this test's timer")
	}
	job = siteJobFor(t, dir, "index.html", "", "")
	job.Print.WaitForSelector = "#done"
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, job)), "drawn late")
	// mochawesome's ready selector (chromium/site_ready.go): its app mounted in #report.
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, siteJobFor(t, dir, "index.html", "mochawesome", ""))), "drawn late")
}

// Requests quiet.js does not see in the page (a worker's timers and
// fetches) are waited for by the network-quiet wait: the page draws what
// the worker fetched in a chain of six requests 150 ms apart (without that
// wait, the page is printed before the chain ends).
func TestSiteWaitsForWorkerFetch(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	files := map[string]string{
		"index.html": `<!DOCTYPE html><title>Worker</title><div id="out">no data</div>
<script>
const w = new Worker("w.js");
w.onmessage = (e) => { document.getElementById("out").textContent = "worker said " + e.data; };
</script>`,
		"w.js": `const later = (ms) => new Promise(r => setTimeout(r, ms));
const hop = (name) => fetch("data/" + name).then(r => r.json())
  .then(d => d.next ? later(150).then(() => hop(d.next)) : d.word);
hop("0.json").then(w => postMessage(w));`,
	}
	for i := range 6 {
		next := fmt.Sprintf(`"next": "%d.json"`, i+1)
		if i == 5 {
			next = `"word": "eleven"`
		}
		files[fmt.Sprintf("data/%d.json", i)] = "{" + next + "}"
	}
	writeFiles(t, dir, files)
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, sharedManager(t), siteJobFor(t, dir, "index.html", "", ""))), "worker said eleven")
}

// A browser killed between jobs is replaced when a site job finds it dead,
// and the site job runs once more on the fresh one.
func TestSiteAfterChromiumCrash(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<title>A</title><p>page a</p><a href="b.html">b</a>`,
		"b.html":     `<title>B</title><p>page b</p>`,
	})
	convertOK(t, m, siteJobFor(t, dir, "index.html", "", ""))
	cur, _ := m.chrome.Supervisor().Current()
	pid := cur.RootPID()
	engine.KillGroup(pid)
	for engine.Alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, siteJobFor(t, dir, "index.html", "", report.ScopeSite))), "page a", "page b")
	if m.chrome.Restarts() != 1 {
		t.Errorf("restarts = %d, want 1", m.chrome.Restarts())
	}
}

// A page of the site that never finishes loading fails the job at the
// job's deadline, naming the page; the engine prints the next job.
func TestSitePageDeadline(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.JobTimeout = 3 * time.Second })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<title>A</title><p>page a</p><a href="hang.html">hang</a>`,
		"hang.html":  `<title>H</title><script>for (;;) {}</script>`,
	})
	_, err := m.PDF(testfixture.Ctx(t), siteJobFor(t, dir, "index.html", "", report.ScopeSite))
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, "hang.html") || !strings.Contains(re.Message, "timed out") {
		t.Errorf("message %q does not name the page and the deadline", re.Message)
	}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, siteJobFor(t, dir, "index.html", "", ""))), "page a")
}
