package web_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
)

// TestSiteFramedFromContentOrigin: with the daemon's own content origin
// (wired as `reportd serve` wires it) and a token for writes (reads stay
// public, so content URLs are plain; signed links and their cookie are
// TestHostileSiteIsolated's with auth.reads), the reader's frame
// really shows the site: the entry page loads, its relative fetches work,
// a file from the tree opens,
// and the framed site can neither navigate the dashboard's tab nor read
// its storage. It needs the content origin (internal/content); a daemon
// without one hands out no siteUrl, and the test says so and skips.
func TestSiteFramedFromContentOrigin(t *testing.T) {
	const token = "site-frame-test-token-0123456789"
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.Auth.Token = token }})
	send := func(method, path string, body io.Reader, ct string) *apitest.Response {
		req, err := http.NewRequest(method, e.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		return e.Send(req)
	}
	if r := send("POST", "/api/projects", strings.NewReader(`{"name":"web"}`), "application/json"); r.StatusCode != 201 {
		t.Fatalf("create project: %d %s", r.StatusCode, r.Body)
	}
	zipped, _ := siteZip(t)
	body, ct := apitest.Multipart(apitest.Part{Name: "projectId", Data: []byte("1")}, apitest.Part{Name: "fileType", Data: []byte("html")},
		apitest.Part{Name: "file", FileName: "htmlcov.zip", Data: zipped})
	r := send("POST", "/api/reports", body, ct)
	if r.StatusCode != 201 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	var rep report.Report
	r.JSON(t, &rep)
	if rep.SiteURL == "" {
		t.Skip("this daemon has no content origin (no siteUrl): the framed content needs internal/content wired in")
	}

	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", e.URL, rep.ID)))
	if title := inFrame[string](b, "iframe.frame-site", "the entry page", `document.readyState === 'complete' && document.title`); title != "Coverage report" {
		t.Errorf("framed page title %q", title)
	}
	if got := inFrame[string](b, "iframe.frame-site", "a relative fetch", `fetch('style.css').then((r) => String(r.status))`); got != "200" {
		t.Errorf("the site's own fetch of style.css: %s", got)
	}
	if got := inFrame[string](b, "iframe.frame-site", "localStorage", `(() => { try { localStorage.setItem('k', 'v'); return localStorage.getItem('k'); } catch (e) { return e.name; } })()`); got != "v" {
		t.Errorf("localStorage in the frame: %s", got)
	}
	b.waitFor("the file tree", `document.querySelector('.site-tree')?.dataset.state === 'ready'`, 30*time.Second)
	b.click(`.tree-dir[data-path="pkg"] > summary`)
	b.click(`a.tree-file[data-path="pkg/mod_py.html"]`)
	if got := inFrame[string](b, "iframe.frame-site", "the file from the tree", `document.readyState === 'complete' && document.title === 'mod.py' && document.body.innerText`); got != "mod.py" {
		t.Errorf("file from the tree shows %q", got)
	}
	dash := eval[string](b, `location.href`)
	if got := inFrame[string](b, "iframe.frame-site", "top navigation", `(() => { try { top.location.href = 'http://example.invalid/'; return 'allowed'; } catch (e) { return e.name; } })()`); got != "SecurityError" {
		t.Errorf("the framed site navigating the dashboard's tab: %s", got)
	}
	if got := inFrame[string](b, "iframe.frame-site", "the dashboard's storage", `(() => { try { return 'read ' + parent.sessionStorage.length; } catch (e) { return e.name; } })()`); got != "SecurityError" {
		t.Errorf("the framed site reading the dashboard's sessionStorage: %s", got)
	}
	if now := eval[string](b, `location.href`); now != dash {
		t.Errorf("the dashboard moved from %s to %s", dash, now)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems (a frame-src refusal: the dashboard's CSP lacks the content origin):\n%s", strings.Join(p, "\n"))
	}
}
