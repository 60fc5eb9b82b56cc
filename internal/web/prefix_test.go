package web_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardBehindPrefix serves reportd under /reports/ through a
// reverse proxy that strips the prefix, as a shared host would. Every
// request the dashboard makes must stay under the prefix.
func TestDashboardBehindPrefix(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	target, err := url.Parse(d.base)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/reports/", http.StripPrefix("/reports", httputil.NewSingleHostReverseProxy(target)))
	proxy := httptest.NewServer(mux)
	defer proxy.Close()

	png, err := os.ReadFile(fixture(t, "cover.png"))
	if err != nil {
		t.Fatal(err)
	}
	d.api(t, "POST", "/projects", map[string]any{
		"name": "Behind a proxy", "coverImage": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png),
	})

	b := startBrowser(t)
	b.do(chromedp.Navigate(proxy.URL + "/reports/"))
	b.waitText("li.card", "Behind a proxy")
	b.waitFor("cover loaded", `document.querySelector('img.card-cover')?.complete && document.querySelector('img.card-cover').naturalWidth === 320`, 30*time.Second)
	b.click("li.card .card-link")
	b.waitFor("project page", `document.querySelector('h1')?.textContent === 'Behind a proxy'`, 30*time.Second)
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{fixture(t, "weekly-summary.md")}))
	b.waitFor("upload done", `document.querySelectorAll('.upload-done').length === 1`, 60*time.Second)
	b.click("li.report .report-name")
	// The rendering is fetched through the prefix too.
	if got := readMarkdownFrame(t, b); got.H1 != "Weekly summary" {
		t.Errorf("rendered heading %q", got.H1)
	}
	status := eval[int](b, `fetch(document.getElementById('get-pdf').href).then((r) => r.status)`)
	if status != http.StatusOK {
		t.Errorf("Get PDF through the proxy: status %d", status)
	}
	if got := eval[string](b, `location.pathname`); got != "/reports/" {
		t.Errorf("the page left the prefix: %s", got)
	}
	outside := eval[[]string](b, `performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((p) => !p.startsWith('/reports/'))`)
	if len(outside) > 0 {
		t.Errorf("requests outside the prefix: %s", strings.Join(outside, ", "))
	}
	if n := eval[int](b, `performance.getEntriesByType('resource').length`); n < 10 {
		t.Errorf("only %d requests recorded; the check above saw too little", n)
	}
	if pr := b.problems(); len(pr) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(pr, "\n"))
	}
}
