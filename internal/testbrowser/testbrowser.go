// Package testbrowser starts the headless Chromium that browser tests
// drive (chromedp): the Debian chromium-headless-shell the engines use,
// with a throwaway profile and every *.localhost name resolved to
// 127.0.0.1, where report origins live (http://{id}.localhost:<port>).
package testbrowser

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium is the browser the tests run.
const Chromium = "/usr/bin/chromium-headless-shell"

// Start starts Chromium for t and returns its first tab, stopped when t
// ends; within bounds the whole session. extra adds allocator options. It
// skips t when Chromium is not installed (scripts/install-deps.sh
// installs it).
func Start(t testing.TB, within time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		t.Skipf("%s not installed (scripts/install-deps.sh installs it)", Chromium)
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium),
		chromedp.Headless,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Chromium resolves *.localhost to loopback itself; this makes it explicit.
		chromedp.Flag("host-resolver-rules", "MAP *.localhost 127.0.0.1"),
	}, extra...)
	ctx, cancelTime := context.WithTimeout(context.Background(), within)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancelTime() })
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting %s: %v", Chromium, err)
	}
	return tab
}
