package convert

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// staticPage has no script, so a tab that printed an inert page before
// replaces its content in place instead of navigating.
func staticPage(url, text string) []byte {
	return []byte(fmt.Sprintf(`<!DOCTYPE html><meta charset="utf-8"><title>%[2]s</title>
<link rel="stylesheet" href="%[1]s/style.css">
<style>@font-face{font-family:x;src:url(%[1]s/font.woff2)} h1{font-family:x,sans-serif}</style>
<img src="%[1]s/pixel.png"><img src="relative.png">
<h1>%[2]s</h1><p>Café 你好</p>`, url, text))
}

func TestHTMLInPlaceMatchesNavigation(t *testing.T) {
	needChromium(t)
	srv, hits := hitCounter(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
	first := pdfText(t, convertOK(t, m, jobFor(t, report.HTML, staticPage(srv.URL, "First page"))))
	wantText(t, first, "First page", "Café", "你好")
	// The same markup again, now replaced in place: same text and pages.
	doc := append(staticPage(srv.URL, "First page"), " "...) // another content key
	pdf := convertOK(t, m, jobFor(t, report.HTML, doc))
	if got := pdfText(t, pdf); got != first {
		t.Errorf("in-place text %q differs from navigated %q", got, first)
	}
	if info := pdfInfo(t, pdf); info["Pages"] != "1" || !strings.HasPrefix(info["Page size"], "595") {
		t.Errorf("in-place PDF: pages %q, size %q", info["Pages"], info["Page size"])
	}
	// A third document leaves nothing of the second behind.
	third := pdfText(t, convertOK(t, m, jobFor(t, report.HTML, staticPage(srv.URL, "Third page"))))
	wantText(t, third, "Third page")
	if strings.Contains(third, "First page") {
		t.Errorf("the previous document leaked into the next: %q", third)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("replaced pages reached a loopback server %d times; want 0", n)
	}
	if n, r := m.chrome.done.Load(), m.chrome.replaced.Load(); n != 3 || r != 2 {
		t.Errorf("prints = %d, replaced in place = %d; want 3 and 2", n, r)
	}
}

func TestHTMLInPlaceAfterScriptPage(t *testing.T) {
	needChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>inert</p>")))
	// A script page navigates; its timer must not reach the next report.
	convertOK(t, m, jobFor(t, report.HTML, []byte(`<p>scripted</p><script>
setInterval(() => document.body.insertAdjacentHTML('beforeend', '<p>LEAKED</p>'), 1)</script>`)))
	text := pdfText(t, convertOK(t, m, jobFor(t, report.HTML, []byte("<p>clean one</p>"))))
	text += pdfText(t, convertOK(t, m, jobFor(t, report.HTML, []byte("<p>clean two</p>"))))
	wantText(t, text, "clean one", "clean two")
	if r := m.chrome.replaced.Load(); r != 1 { // "clean one" navigates, "clean two" replaces
		t.Errorf("replaced in place = %d, want 1", r)
	}
	if strings.Contains(text, "LEAKED") || strings.Contains(text, "scripted") {
		t.Errorf("a script page leaked into later reports: %q", text)
	}
}

func TestHTMLInPlaceAllowNetworkLoadsBeforePrint(t *testing.T) {
	needChromium(t)
	srv, hits := hitCounter(t)
	m := newManager(t, func(c *Config) { c.AllowNetwork = true; c.ChromiumTabs = 1 })
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>inert</p>")))
	page := fmt.Sprintf(`<p>before</p><object data="%s/obj"></object>`, srv.URL) // object: navigates
	convertOK(t, m, jobFor(t, report.HTML, []byte(page)))
	before := hits.Load()
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>inert again</p>")))
	convertOK(t, m, jobFor(t, report.HTML, staticPage(srv.URL, "Allowed")))
	if r := m.chrome.replaced.Load(); r != 1 {
		t.Errorf("replaced in place = %d, want 1", r)
	}
	if hits.Load() <= before {
		t.Error("with AllowNetwork a replaced page never reached the server")
	}
}

func TestHTMLInPlaceCannotReadFiles(t *testing.T) {
	needChromium(t)
	secret := t.TempDir() + "/secret.txt"
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>inert</p>")))
	doc := fmt.Sprintf(`<p>local</p><img src="file://%[1]s"><link rel="stylesheet" href="file://%[1]s">`, secret)
	text := pdfText(t, convertOK(t, m, jobFor(t, report.HTML, []byte(doc))))
	wantText(t, text, "local")
	if r := m.chrome.replaced.Load(); r != 1 {
		t.Errorf("replaced in place = %d, want 1", r)
	}
	if strings.Contains(text, "TOP-SECRET") {
		t.Error("a replaced page read a local file")
	}
}

func TestCanReuse(t *testing.T) {
	for doc, want := range map[string]bool{
		"<p>static, based on the data</p><style>p{color:red}</style>": true,
		"<SCRIPT>x()</SCRIPT>":                          false,
		`<img src="a.png" onerror="draw()">`:            false,
		`<a href="JavaScript:alert(1)">x</a>`:           false,
		`<iframe srcdoc="&lt;script&gt;"></iframe>`:     false,
		`<frameset><frame src="a"></frameset>`:          false,
		`<object data="a.svg"></object>`:                false,
		`<embed src="a.svg">`:                           false,
		`<meta http-equiv="refresh" content="0;url=x">`: false,
		"<p>Caf\xe9</p>":                                false, // not UTF-8: served with its own charset
	} {
		if got := canReuse([]byte(doc)); got != want {
			t.Errorf("canReuse(%q) = %v, want %v", doc, got, want)
		}
	}
}
