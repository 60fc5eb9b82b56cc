package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStableLinks: the project page and the reader offer the stable
// links, by the project's slug and each report's name and type, and each
// one the page shows leads (302) to the newest report it names; a
// reserved name goes in ?name=.
func TestStableLinks(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	p := d.api(t, "POST", "/projects", map[string]any{"name": "web"})
	id := int(p["id"].(float64))
	d.upload(t, id, "coverage.md", nil)                                // 1
	d.upload(t, id, "coverage.md", map[string]string{"branch": "dev"}) // 2: newest "coverage"
	d.upload(t, id, "notes.md", map[string]string{"name": "pdf"})      // 3: a reserved name, newest of all

	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + fmt.Sprintf("/#/projects/%d", id)))
	b.waitFor("three reports", `document.querySelectorAll('.report').length === 3`, 30*time.Second)
	b.click("#project-links > summary")
	got := eval[[]string](b, `[...document.querySelectorAll('#project-links input')].map((i) => i.value)`)
	base := d.base + "/p/web/latest"
	want := []string{base, base + "/coverage?type=md", base + "?name=pdf&type=md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("project links %q, want %q", got, want)
	}
	for i, wantID := range []string{"3", "2", "3"} {
		if got := follow(t, want[i]); got != wantID {
			t.Errorf("%s leads to report %q, want %s", want[i], got, wantID)
		}
	}

	b.do(chromedp.Navigate(d.base + "/#/reports/1"))
	b.waitFor("the reader's links by slug", `document.querySelector('#link-project')?.value.includes('/p/web/')`, 30*time.Second)
	b.click(".stable-links > summary")
	links := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('.stable-links input')].map((i) => [i.id, i.value]))`)
	wantLinks := map[string]string{"link-project": base, "link-name": base + "/coverage?type=md", "link-badge": d.base + "/p/web/coverage/badge.svg?type=md"}
	if len(links) != len(wantLinks) {
		t.Errorf("reader links %v: a Markdown report has no site link", links)
	}
	for k, v := range wantLinks {
		if links[k] != v {
			t.Errorf("%s = %q, want %q", k, links[k], v)
		}
	}
	if res, err := http.Get(links["link-badge"]); err != nil || res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") {
		t.Errorf("badge link: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	// Copy: the clipboard may be refused to a headless page; either way the
	// page says what happened, and nothing throws.
	b.click(`button[aria-label="Copy: Latest report of this project"]`)
	b.waitFor("a copy message", `/copied|Ctrl\+C/.test(document.getElementById('live').textContent)`, 10*time.Second)
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}

// follow GETs a stable link without following it and returns the id of
// the report it sends to.
func follow(t *testing.T, u string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Fatalf("GET %s: status %d", u, res.StatusCode)
	}
	return res.Header.Get("X-Report-Id")
}
