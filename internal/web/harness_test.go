package web_test

// The browser tests drive the dashboard in Debian's chromium-headless-shell
// against the real reportd: TestMain builds ./cmd/reportd once and each
// test starts it on a loopback port with a fresh data directory.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testbrowser"
)

var (
	updateShots = flag.Bool("screenshots", false, "write the dashboard screenshots to docs/screenshots")
	reportdBin  string
)

func TestMain(m *testing.M) {
	if reexec.Init() { // a conversion child (internal/convert/reexec.go)
		return
	}
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := testbin.BuildTemp("reportd-web-test-", "reportd")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	reportdBin = filepath.Join(dir, "reportd")
	// Real generators' sites (sites_test.go), made once for the binary.
	return sitegen.Main(m)
}

// daemon is a running reportd.
type daemon struct {
	base string // http://127.0.0.1:port
}

// startDaemon runs reportd with the given config file content.
func startDaemon(t *testing.T, config string) *daemon {
	t.Helper()
	data := t.TempDir()
	conf := filepath.Join(t.TempDir(), "reportd.yaml")
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	d := testbin.StartT(t, reportdBin, testbin.Options{DataDir: data, Config: conf})
	return &daemon{base: d.URL()}
}

// api calls the daemon directly, to set up data or change it behind the
// dashboard's back.
func (d *daemon) api(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	return d.call(t, "", method, "/api"+path, body)
}

// call sends body as JSON to path (with a bearer token unless token is "")
// and decodes the answer; a status of 300 or more fails t.
func (d *daemon) call(t *testing.T, token, method, path string, body any) map[string]any {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, d.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: status %d", method, path, res.StatusCode)
	}
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return out
}

// browser is one headless Chromium tab plus what its console said.
type browser struct {
	ctx     context.Context
	t       *testing.T
	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	// Bounds the whole browser session; each wait below has its own limit.
	bctx := testbrowser.Start(t, 4*time.Minute,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 800),
	)
	b := &browser{ctx: bctx, t: t}
	msgs := chromedp.Console(bctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\npage text: %s", err, b.pageText())
	}
}

// eval runs a JavaScript expression (awaiting a promise) and decodes it.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("eval %s: %v", js, err)
	}
	return v
}

func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main')?.innerText ?? ''`))
	return s
}

// waitFor polls a JavaScript predicate; timeout bounds a failure only.
func (b *browser) waitFor(what, predicate string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+10*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		b.t.Fatalf("waiting for %s: %v\npage text:\n%s", what, err, b.pageText())
	}
}

// waitText waits until the element matching sel contains text.
func (b *browser) waitText(sel, text string) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("%q in %s", text, sel),
		fmt.Sprintf(`!!document.querySelector(%s)?.textContent.includes(%s)`, jsString(sel), jsString(text)), 30*time.Second)
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`document.querySelector(%s)?.innerText ?? ''`, jsString(sel)))
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel)))
}

func (b *browser) click(sel string) {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(sel)))
}

// screenshot captures the viewport and, with -screenshots, writes it to
// docs/screenshots for the README.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	// Let fonts, images and the toast's transition settle.
	b.waitFor("images loaded", `[...document.images].every((i) => i.complete) && document.fonts.status === 'loaded'`, 30*time.Second)
	// A toast from the last action would cover part of the picture.
	eval[bool](b, `(() => { document.getElementById('toast').className = 'toast'; return true; })()`)
	b.settle()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		b.t.Fatalf("screenshot %s is not a PNG", name)
	}
	if *updateShots {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "screenshots", name), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// settle waits for CSS transitions to end (endless ones, the spinner,
// excepted), so that colours are read at rest.
func (b *browser) settle() {
	b.t.Helper()
	b.waitFor("transitions to end", `document.getAnimations().every((a) => a.playState !== 'running' || a.effect.getTiming().iterations === Infinity)`, 30*time.Second)
}

// colorScheme emulates prefers-color-scheme; "" restores the default.
func (b *browser) colorScheme(v string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	params := emulation.SetEmulatedMediaParams{}
	if v != "" {
		params.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, params); err != nil {
		b.t.Fatal(err)
	}
}

// problems lists uncaught exceptions and CSP violations seen so far.
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.console {
		s := m.String()
		if m.IsException() || strings.Contains(s, "Content Security Policy") {
			out = append(out, s)
		}
	}
	return out
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
