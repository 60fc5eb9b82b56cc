package office

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Tests use the real LibreOffice, in the real sandbox. They skip, saying
// why, only when a program is not installed; CI installs them all
// (scripts/install-deps.sh). The decks are convert's testdata.

func TestMain(m *testing.M) {
	if reexec.Init() { // a child this test binary started (convert/reexec.go's registry)
		return
	}
	code := m.Run()
	if shared != nil {
		shared.Close()
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap)")
	}
	if err := engine.NewSandbox("", false, nil, quietLog).Ready(); err != nil {
		t.Fatalf("bubblewrap is installed but cannot sandbox here: %v", err)
	}
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// testConfig is convert's defaults with timeouts generous enough for a
// loaded 2-core machine, one worker and no small-deck lane (tests reach
// the main pool's worker; TestOfficeSmallDeckLane turns the lane on).
func testConfig() Config {
	return Config{
		SofficePath:      "soffice",
		PythonPath:       "/usr/bin/python3",
		Workers:          1,
		QueueSize:        32,
		JobTimeout:       2 * time.Minute,
		MaxJobsPerWorker: 200,
		MaxWorkerRSS:     1 << 30,
		DeckMaxBytes:     512 << 20,
		SmallDeckBytes:   -1,
	}
}

// sandboxed: engines in bubblewrap, as reportd runs them; unsandboxed: the
// controls of the isolation tests.
const (
	sandboxed   = false
	unsandboxed = true
)

// newEngine is an engine with testConfig edited by edit, closed (and its
// workers' directories removed) when the test ends.
func newEngine(t *testing.T, edit func(*Config)) *Engine {
	t.Helper()
	return newEngineBox(t, sandboxed, edit)
}

func newEngineBox(t *testing.T, noSandbox bool, edit func(*Config)) *Engine {
	t.Helper()
	cfg := testConfig()
	if edit != nil {
		edit(&cfg)
	}
	bwrap := ""
	if noSandbox {
		bwrap = "/nonexistent/bwrap"
	}
	box := engine.NewSandbox(bwrap, noSandbox, nil, quietLog)
	e := New(&cfg, quietLog, nil, box, t.TempDir())
	t.Cleanup(e.Close)
	e.Start() // as the Manager does before its first job: every lane warms
	return e
}

var (
	sharedOnce sync.Once
	shared     *Engine
	sharedDir  string // its workers' directories
	sharedErr  error
)

// sharedEngine is one warm engine for the tests that need no special
// configuration, so the suite starts LibreOffice fewer times.
func sharedEngine(t *testing.T) *Engine {
	t.Helper()
	sharedOnce.Do(func() {
		cfg := testConfig()
		dir, err := os.MkdirTemp("", "office-test-")
		if err != nil {
			sharedErr = err
			return
		}
		sharedDir = dir
		shared = New(&cfg, quietLog, nil, engine.NewSandbox("", false, nil, quietLog), dir)
		shared.Start()
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// deckPDF stores content as a deck of type typ and converts it as the
// Manager does (Engine.Convert), returning the PDF's bytes.
func deckPDF(t *testing.T, e *Engine, typ report.FileType, content []byte) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "report"+typ.Ext())
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.pdf")
	if err := e.Convert(testfixture.Ctx(t), 0, typ, src, out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// convertOK converts and returns the PDF's bytes.
func convertOK(t *testing.T, e *Engine, typ report.FileType, content []byte) []byte {
	t.Helper()
	b, err := deckPDF(t, e, typ, content)
	if err != nil {
		t.Fatalf("convert(%s): %v", typ, err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("convert(%s): output does not start with %%PDF-", typ)
	}
	return b
}

func fixture(t *testing.T, name string) []byte { return fixtureTB(t, name) }

// fixtureTB reads a deck of convert's testdata (shared with the Manager's tests).
func fixtureTB(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
