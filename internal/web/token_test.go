package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardTokenPrompt: with auth.reads and scoped tokens, the first
// page load is refused (401) and the dashboard asks for a token by
// itself; with a read token the projects show; a change it may not make
// (403) says which scope is missing.
func TestDashboardTokenPrompt(t *testing.T) {
	const admin = "adm1n-legacy-token"
	d := startDaemon(t, "dashboard: true\nauth:\n  token: "+admin+"\n  reads: true\n")
	d.call(t, admin, "POST", "/api/projects", json.RawMessage(`{"name":"Alpha"}`))
	d.call(t, admin, "POST", "/api/projects", json.RawMessage(`{"name":"Beta"}`))
	readAll := d.call(t, admin, "POST", "/admin/tokens", json.RawMessage(`{"scope":"read","name":"dashboard"}`))["secret"].(string)
	readBeta := d.call(t, admin, "POST", "/admin/tokens", json.RawMessage(`{"scope":"read","projects":[2]}`))["secret"].(string)

	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + "/"))
	b.waitFor("token prompt", `document.activeElement?.name === 'token'`, 15*time.Second)
	b.waitText("dialog[open]", "a valid bearer token is required")
	b.waitText("dialog[open]", "asks for a token to view reports too (its administrator set auth.reads)")
	if !eval[bool](b, `!document.getElementById('token-btn').hidden`) {
		t.Error("token button hidden after a 401")
	}
	b.do(chromedp.SendKeys(chromedp.CSS("dialog[open] input[name=token]"), readAll))
	b.click("dialog[open] button[type=submit]")
	b.waitText("main", "Alpha")
	b.waitText("main", "Beta")
	b.waitText("#token-btn", "API token set")
	if eval[string](b, `sessionStorage.getItem('reportd.token')`) != readAll || eval[string](b, `localStorage.getItem('reportd.token') ?? ''`) != "" {
		t.Error("the token is not kept in sessionStorage only")
	}

	// A change the read token may not make: 403, and the scope is named.
	b.click("#new-project")
	b.waitFor("create dialog", `document.activeElement?.name === 'name'`, 10*time.Second)
	b.do(chromedp.SendKeys(chromedp.CSS("dialog[open] input[name=name]"), "Gamma"))
	b.click("dialog[open] button[type=submit]")
	b.waitText("dialog[open] .dialog-error", "has scope read; creating a project needs scope admin")
	b.waitText("dialog[open] .dialog-error", "Enter a token with scope admin")
	b.click("dialog[open] .dialog-actions button:first-child")
	b.waitFor("dialog closed", `document.querySelector('dialog') === null`, 10*time.Second)

	// A token limited to project 2 sees only it.
	b.click("#token-btn")
	b.waitFor("token dialog", `document.activeElement?.name === 'token'`, 10*time.Second)
	b.do(chromedp.SetValue(chromedp.CSS("dialog[open] input[name=token]"), readBeta))
	b.click("dialog[open] button[type=submit]")
	b.waitFor("only Beta", `document.querySelector('main').textContent.includes('Beta') && !document.querySelector('main').textContent.includes('Alpha')`, 15*time.Second)
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}
