package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestDashboardStates holds the project list request in the browser to see
// the loading state, then fails it to see the error state and its retry.
// Holding a request (not slowing it) keeps the test free of timing.
func TestDashboardStates(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	b := startBrowser(t)
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()

	paused := chromedp.Events(ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/projects"}},
	}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(d.base + "/"))
	var held fetch.RequestID
	for ev, err := range paused {
		if err != nil {
			t.Fatal(err)
		}
		held = ev.RequestID
		break
	}
	b.waitText(".state-loading", "Loading projects…")
	if got := eval[string](b, `document.querySelector('.state-loading').getAttribute('role')`); got != "status" {
		t.Errorf("loading state role %q, want status", got)
	}
	if _, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: held, ErrorReason: network.ErrorReasonConnectionRefused}); err != nil {
		t.Fatal(err)
	}
	b.waitText(".state-error", "Could not load projects")
	b.waitText(".state-error", "Cannot reach reportd. Check that the daemon is running and try again.")
	if _, err := chromedp.Call(ctx, fetch.Disable, struct{}{}); err != nil {
		t.Fatal(err)
	}
	b.click(".state-error button")
	b.waitText(".state-empty", "No projects yet")
	b.screenshot("projects-empty.png")
}
