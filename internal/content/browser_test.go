package content

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/testbrowser"
)

// tab is a headless Chromium tab that resolves every *.localhost name to
// 127.0.0.1, as browsers do.
func tab(t *testing.T) context.Context {
	t.Helper()
	return testbrowser.Start(t, 3*time.Minute)
}

func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// probe is what the report's script finds out and posts to its parent.
const probe = `(async () => {
  const out = {};
  try { out.data = await (await fetch('data/x.json')).json(); } catch (e) { out.data = String(e); }
  try { localStorage.setItem('k', 'mine'); out.ls = localStorage.getItem('k'); out.token = localStorage.getItem('token'); } catch (e) { out.ls = String(e); }
  try { out.parent = parent.document.title; } catch (e) { out.parent = 'blocked'; }
  try { await navigator.serviceWorker.register('sw.js'); out.sw = 'registered'; } catch (e) { out.sw = String(e); }
  out.cookie = document.cookie;
  out.search = location.search;
  (parent === window ? (m => { document.body.dataset.result = JSON.stringify(m); }) : (m => parent.postMessage(m, '*')))(out);
})();`

type probeResult struct {
	Data   any    `json:"data"`
	LS     string `json:"ls"`
	Token  any    `json:"token"`
	Parent string `json:"parent"`
	SW     string `json:"sw"`
	Cookie string `json:"cookie"`
	Search string `json:"search"`
}

// TestBrowserFramedReport: in real Chromium, the dashboard (another
// origin) frames a protected report by its signed URL: the signature is
// exchanged for the cookie inside the frame, the report's script, fetch of
// its JSON, localStorage and a service worker work, and the report can
// neither reach the dashboard's document nor its storage, nor read its own
// session cookie. Opened in its own tab the URL ends clean, and another
// report's origin is refused.
func TestBrowserFramedReport(t *testing.T) {
	s := newSites(t)
	s.add(t, 12, "",
		"index.html", `<!DOCTYPE html><title>report</title><body><script src="app.js"></script></body>`,
		"app.js", probe,
		"data/x.json", `{"passed":3}`,
		"sw.js", `self.addEventListener('fetch', () => {});`)
	s.add(t, 13, "", "index.html", "<p>thirteen</p>")

	dash := httptest.NewServer(nil)
	t.Cleanup(dash.Close)
	g := start(t, s, Config{URL: "http://{id}.localhost:{port}", Secret: "browser-test", Protected: protected, FrameAncestors: []string{dash.URL}, Now: time.Now})
	o, port := g.o, g.srv.Listener.Addr().(*net.TCPAddr).Port
	dash.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><title>dashboard</title><body><script>
localStorage.setItem('token', 'dashboard-secret');
addEventListener('message', e => { document.body.dataset.result = JSON.stringify(e.data); });
</script><iframe src="%s"></iframe></body>`, o.URL(12, ""))
	})

	ctx := tab(t)
	wait := func() probeResult {
		t.Helper()
		raw := run(t, ctx, chromedp.Poll[string](`document.body && document.body.dataset.result`,
			chromedp.WithPollingTimeout(45*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
		var p probeResult
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatalf("probe %q: %v", raw, err)
		}
		return p
	}
	run(t, ctx, chromedp.Navigate(dash.URL))
	p := wait()
	if d, _ := p.Data.(map[string]any); d == nil || d["passed"] != float64(3) {
		t.Errorf("fetch of data/x.json in the frame: %v", p.Data)
	}
	if p.LS != "mine" || p.Token != nil {
		t.Errorf("localStorage in the frame: own %q, dashboard's token %v (want mine, null)", p.LS, p.Token)
	}
	if p.Parent != "blocked" {
		t.Errorf("the report reached the dashboard's document: %q", p.Parent)
	}
	if p.SW != "registered" {
		t.Errorf("service worker: %s", p.SW)
	}
	if strings.Contains(p.Cookie, cookieName) || p.Search != "" {
		t.Errorf("cookie visible to scripts %q / signature left in the URL %q", p.Cookie, p.Search)
	}

	// Its own tab, from a fresh signed URL.
	run(t, ctx, chromedp.Navigate(o.URL(12, "")))
	p = wait()
	if d, _ := p.Data.(map[string]any); d == nil || d["passed"] != float64(3) || p.Search != "" || p.Parent != "blocked" && p.Parent != "report" {
		t.Errorf("top level: %+v", p)
	}
	if loc := run(t, ctx, chromedp.Evaluate[string](`location.href`)); loc != fmt.Sprintf("http://12.localhost:%d/", port) {
		t.Errorf("address after the exchange: %s", loc)
	}
	// Report 13's origin: no cookie there.
	run(t, ctx, chromedp.Navigate(fmt.Sprintf("http://13.localhost:%d/", port)))
	if txt := run(t, ctx, chromedp.Evaluate[string](`document.body.innerText`)); !strings.Contains(txt, "protected") {
		t.Errorf("report 13 without a link: %q", txt)
	}
}
