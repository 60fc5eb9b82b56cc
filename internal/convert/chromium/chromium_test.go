package chromium

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

func TestHTMLToPDF(t *testing.T) {
	testfixture.NeedChromium(t)
	pdf := printOK(t, sharedEngine(t), fixture(t, "report.html"))
	text := testfixture.PDFText(t, pdf)
	testfixture.WantText(t, text, "Quarterly report", "Café résumé naïve", "你好", "1 234 €")
	// Drawn by script after load: the bounded settle wait must catch it.
	testfixture.WantText(t, text, "Chart drawn by script")
	if size := testfixture.PDFInfo(t, pdf)["Page size"]; !strings.HasPrefix(size, "595") {
		t.Errorf("page size %q, want A4 (595 x 842 pts)", size)
	}
}

func TestHTMLLetterAndCSSPageSize(t *testing.T) {
	testfixture.NeedChromium(t)
	c := newEngine(t, func(c *Config) { c.ChromiumTabs = 1 })
	pdf := printPaper(t, c, "Letter", []byte("<p>letter</p>"))
	if size := testfixture.PDFInfo(t, pdf)["Page size"]; !strings.HasPrefix(size, "612 x 792") {
		t.Errorf("page size %q, want Letter (612 x 792 pts)", size)
	}
	// The document's own @page size wins over the configured paper.
	pdf = printPaper(t, c, "Letter", []byte(`<style>@page { size: A5 landscape }</style><p>a5</p>`))
	if size := testfixture.PDFInfo(t, pdf)["Page size"]; !strings.Contains(size, "x 420") {
		t.Errorf("page size %q, want A5 landscape (595 x 420 pts)", size)
	}
}

// hitCounter is a loopback server that counts the requests it gets.
func hitCounter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "REMOTE-CONTENT")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func remotePage(url string) []byte {
	return []byte(fmt.Sprintf(`<!DOCTYPE html><meta charset="utf-8">
<link rel="stylesheet" href="%[1]s/style.css">
<img src="%[1]s/pixel.png">
<iframe src="%[1]s/frame"></iframe>
<p id="out">local text</p>
<script src="%[1]s/script.js"></script>
<script>
fetch("%[1]s/fetch").then(r => r.text()).then(t => { document.getElementById('out').textContent = t; }, () => {});
try { new WebSocket("%[2]s/ws"); } catch (e) {}
</script>`, url, strings.Replace(url, "http", "ws", 1)))
}

func TestHTMLNetworkBlockedByDefault(t *testing.T) {
	testfixture.NeedChromium(t)
	srv, hits := hitCounter(t)
	text := testfixture.PDFText(t, printOK(t, sharedEngine(t), remotePage(srv.URL)))
	testfixture.WantText(t, text, "local text")
	if strings.Contains(text, "REMOTE-CONTENT") {
		t.Error("remote content reached the PDF")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the page reached a loopback server %d times; want 0", n)
	}
}

func TestHTMLNetworkAllowed(t *testing.T) {
	testfixture.NeedChromium(t)
	srv, hits := hitCounter(t)
	c := newEngine(t, func(c *Config) { c.AllowNetwork = true; c.ChromiumTabs = 1 })
	text := testfixture.PDFText(t, printOK(t, c, remotePage(srv.URL)))
	testfixture.WantText(t, text, "REMOTE-CONTENT")
	if hits.Load() == 0 {
		t.Error("with AllowNetwork the page never reached the server")
	}
}

func TestHTMLHungScriptTimesOutAndTabRecovers(t *testing.T) {
	testfixture.NeedChromium(t)
	c := newEngine(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 5 * time.Second })
	src := []byte(`<p>x</p><script>while (true) {}</script>`)
	err := printErr(t, c, "A4", src)
	re := testfixture.WantKind(t, err, report.Conversion)
	// It says what timed out, after how long, which setting that is, and how big the input was.
	for _, s := range []string{"timed out after 5s", "(convert.job_timeout)", fmt.Sprintf("(%d bytes)", len(src))} {
		if !strings.Contains(re.Message, s) {
			t.Errorf("message %q lacks %q", re.Message, s)
		}
	}
	// The same single tab slot serves the next job.
	c.cfg.JobTimeout = 2 * time.Minute
	testfixture.WantText(t, testfixture.PDFText(t, printOK(t, c, []byte("<p>after the hang</p>"))), "after the hang")
}

func TestHTMLAlertDoesNotStall(t *testing.T) {
	testfixture.NeedChromium(t)
	pdf := printOK(t, sharedEngine(t), []byte(`<p>before</p><script>alert("hi"); document.write("<p>after alert</p>")</script>`))
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "before", "after alert")
}

func TestChromiumCrashIsReplaced(t *testing.T) {
	testfixture.NeedChromium(t)
	c := newEngine(t, func(c *Config) { c.ChromiumTabs = 1 })
	printOK(t, c, []byte("<p>before</p>"))
	cur, _ := c.sup.Current()
	pid := cur.pid
	engine.KillGroup(pid)
	for engine.Alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}
	testfixture.WantText(t, testfixture.PDFText(t, printOK(t, c, []byte("<p>after the crash</p>"))), "after the crash")
	if c.restarts.Load() != 1 {
		t.Errorf("restarts = %d, want 1", c.restarts.Load())
	}
}

func TestHTMLLegacyCharset(t *testing.T) {
	testfixture.NeedChromium(t)
	latin1 := []byte("<meta charset=\"iso-8859-1\"><p>Caf\xe9 cr\xe8me</p>")
	testfixture.WantText(t, testfixture.PDFText(t, printOK(t, sharedEngine(t), latin1)), "Café crème")
}
