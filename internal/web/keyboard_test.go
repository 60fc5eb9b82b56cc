package web_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestKeyboardOnly reaches a project, its upload button and a report's
// reader with Tab and Enter alone, and checks that focus is visible.
func TestKeyboardOnly(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	d.api(t, "POST", "/projects", map[string]any{"name": "Keyboard project"})
	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + "/"))
	b.waitText("li.card", "Keyboard project")

	// tabTo presses Tab until the focused element matches sel.
	tabTo := func(sel string) {
		t.Helper()
		for range 30 {
			b.do(chromedp.KeyEvent("\t"))
			if eval[bool](b, `document.activeElement.matches(`+jsString(sel)+`)`) {
				outline := eval[string](b, `getComputedStyle(document.activeElement).outlineStyle + ' ' + getComputedStyle(document.activeElement).outlineWidth`)
				if outline == "none 0px" {
					t.Errorf("focus on %s is not visible", sel)
				}
				return
			}
		}
		t.Fatalf("Tab never reached %s; focus is on %s", sel, eval[string](b, `document.activeElement.outerHTML.slice(0, 120)`))
	}

	tabTo(".skip")
	tabTo("li.card .card-link")
	b.do(chromedp.KeyEvent("\r"))
	b.waitFor("project page", `document.querySelector('h1')?.textContent === 'Keyboard project'`, 30*time.Second)
	b.waitFor("focus on the heading", `document.activeElement === document.querySelector('h1')`, 10*time.Second)
	tabTo("#upload-pick")
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{fixture(t, "weekly-summary.md")}))
	b.waitFor("report listed", `document.querySelectorAll('li.report').length === 1`, 60*time.Second)
	tabTo("li.report .report-name")
	b.do(chromedp.KeyEvent("\r"))
	if got := readMarkdownFrame(t, b); got.H1 != "Weekly summary" {
		t.Errorf("rendered heading %q", got.H1)
	}
	tabTo(`.seg button[data-mode=pdf]`)
	b.do(chromedp.KeyEvent("\r"))
	waitPDF(t, b, false)
	tabTo("#download-original")
	tabTo("#get-pdf")
}
