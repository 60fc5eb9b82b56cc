package chromium

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/convert/engine"
)

// Tests drive the engine itself, with the real Chromium; those through
// convert's Manager (routing, cache, sites) are in package convert.

func TestMain(m *testing.M) {
	if reexec.Init() { // a child this test binary started (convert's reexec.go)
		return
	}
	os.Exit(m.Run())
}

func needChromium(t *testing.T) {
	t.Helper()
	for _, name := range []string{"chromium-headless-shell", "chromium"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	t.Skip("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)")
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// testCtx bounds a test's waits generously (a loaded machine).
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newEngine is an engine with timeouts generous enough for a loaded 2-core
// machine (as convert's testConfig), edited by edit, sandboxed.
func newEngine(t *testing.T, edit func(*Config)) *Engine {
	t.Helper()
	cfg := &Config{ChromiumTabs: 2, ChromiumSpares: 2, QueueSize: 32, JobTimeout: 2 * time.Minute,
		ScriptWait: 20 * time.Second, SiteTimeout: 3 * time.Minute, MaxJobsPerWorker: 200, MaxWorkerRSS: 1 << 30}
	if edit != nil {
		edit(cfg)
	}
	c := New(cfg, quietLog, nil, engine.NewSandbox("", false, nil, quietLog), t.TempDir())
	t.Cleanup(c.Close)
	return c
}

// printOK prints an HTML document in a slot of the engine's gate.
func printOK(t *testing.T, c *Engine, body []byte) []byte {
	t.Helper()
	ctx := testCtx(t)
	leave, err := c.Enter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	var out bytes.Buffer
	if err := c.Print(ctx, body, DocOpts("A4", body), &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func wantText(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("PDF text lacks %q; text:\n%s", w, text)
		}
	}
}
