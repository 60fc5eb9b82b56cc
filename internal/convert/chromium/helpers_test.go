package chromium

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/testfixture"
)

// Tests drive the engine itself, with the real Chromium; those through
// convert's Manager (routing, cache, sites) are in package convert.

func TestMain(m *testing.M) {
	if reexec.Init() { // a child this test binary started (convert's reexec.go)
		return
	}
	code := m.Run()
	if shared != nil {
		shared.Close()
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

var (
	sharedOnce sync.Once
	shared     *Engine
	sharedDir  string
)

// sharedEngine is one warm engine for the tests that need no special
// configuration, so the suite starts a browser once.
func sharedEngine(t *testing.T) *Engine {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chromium-test-")
		if err != nil {
			t.Fatal(err)
		}
		sharedDir = dir
		shared = New(testConfig(), quietLog, nil, engine.NewSandbox("", false, nil, quietLog), dir)
	})
	if shared == nil {
		t.Fatal("no shared engine")
	}
	return shared
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// newEngine is an engine with timeouts generous enough for a loaded 2-core
// machine (as convert's testConfig), edited by edit, sandboxed.
func newEngine(t *testing.T, edit func(*Config)) *Engine {
	t.Helper()
	cfg := testConfig()
	if edit != nil {
		edit(cfg)
	}
	c := New(cfg, quietLog, nil, engine.NewSandbox("", false, nil, quietLog), t.TempDir())
	t.Cleanup(c.Close)
	return c
}

// testConfig is convert's defaults with its tests' generous timeouts.
func testConfig() *Config {
	return &Config{ChromiumTabs: 2, ChromiumSpares: 2, QueueSize: 32, JobTimeout: 2 * time.Minute,
		ScriptWait: 20 * time.Second, SiteTimeout: 3 * time.Minute, MaxJobsPerWorker: 200, MaxWorkerRSS: 1 << 30}
}

// printOK prints an HTML document on A4, as convert's Manager does.
func printOK(t *testing.T, c *Engine, body []byte) []byte { return printPaper(t, c, "A4", body) }

// printPaper prints an HTML document with paper as the default.
func printPaper(t *testing.T, c *Engine, paper string, body []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := printTo(t, c, paper, body, &out); err != nil {
		t.Fatalf("print: %v", err)
	}
	return out.Bytes()
}

// printErr prints and returns the error, which must not be nil.
func printErr(t *testing.T, c *Engine, paper string, body []byte) error {
	t.Helper()
	err := printTo(t, c, paper, body, io.Discard)
	if err == nil {
		t.Fatal("print succeeded")
	}
	return err
}

// printTo prints in a slot of the engine's gate, as convert's Manager does.
func printTo(t *testing.T, c *Engine, paper string, body []byte, out io.Writer) error {
	ctx := testfixture.Ctx(t)
	leave, err := c.Enter(ctx, 1)
	if err != nil {
		return err
	}
	defer leave()
	return c.Print(ctx, body, DocOpts(paper, body), out)
}

// fixture is a file of convert's testdata.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
