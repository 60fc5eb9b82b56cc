package convert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Tests use the real engines. They skip, saying why, only when an engine's
// binary is not installed; CI installs them all (scripts/install-deps.sh).

var (
	sharedOnce sync.Once
	shared     *Manager
	sharedErr  error
	nextID     atomic.Int64
)

// sharedManager is one warm manager for the tests that need no special
// configuration, so the suite starts each engine once.
func sharedManager(t *testing.T) *Manager {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "convert-test-cache-")
		if err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = New(testConfig(dir))
		if sharedErr == nil {
			shared.Start(context.Background())
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	if reexec.Init() { // a conversion child this test binary started (reexec.go)
		return
	}
	code := m.Run()
	if shared != nil {
		shared.Close()
		os.RemoveAll(shared.cfg.CacheDir)
	}
	os.Exit(code)
}

// testConfig has timeouts generous enough for a loaded 2-core machine.
func testConfig(cacheDir string) Config {
	c := DefaultConfig()
	c.CacheDir = cacheDir
	c.JobTimeout = 2 * time.Minute
	// The settle wait ends as soon as a page is idle, so a long bound costs
	// nothing and keeps script-drawn content from missing on a slow machine.
	c.ScriptWait = 20 * time.Second
	c.OfficeWorkers = 1
	c.SmallDeckBytes = -1 // one pool, so tests reach its worker; TestOfficeSmallDeckLane turns the lane on
	c.ChromiumTabs = 2
	c.ChromiumSpares = 2 // not a burst's worth (spares.go): tests convert a few documents each
	c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return c
}

func newManager(t *testing.T, edit func(*Config)) *Manager {
	t.Helper()
	cfg := testConfig(t.TempDir())
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// jobFor stores content as a report of the given type in a temp dir and
// returns its job, with a fresh report id so tests never share cache entries.
func jobFor(t *testing.T, typ report.FileType, content []byte) Job {
	t.Helper()
	id := 1000 + nextID.Add(1)
	src := filepath.Join(t.TempDir(), strconv.FormatInt(id, 10)+typ.Ext())
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	return Job{ReportID: id, Type: typ, Src: src, ContentKey: hex.EncodeToString(sum[:])}
}

func fixture(t *testing.T, name string) []byte { return fixtureTB(t, name) }

func fixtureTB(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// convertOK converts and returns the PDF's bytes.
func convertOK(t *testing.T, m *Manager, job Job) []byte {
	t.Helper()
	f, err := m.PDF(testfixture.Ctx(t), job)
	if err != nil {
		t.Fatalf("PDF(%s): %v", job.Type, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("PDF(%s): output does not start with %%PDF-", job.Type)
	}
	return b
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// needSandbox skips without bubblewrap and fails where it is installed but
// cannot sandbox (engine/sandbox_test.go tests the sandbox itself).
func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap)")
	}
	if err := engine.NewSandbox("", false, nil, quietLog).Ready(); err != nil {
		t.Fatalf("bubblewrap is installed but cannot sandbox here: %v", err)
	}
}

// waitQueued returns once n jobs wait at g.
func waitQueued(t *testing.T, g *engine.Gate, n int) {
	t.Helper()
	ctx := testfixture.Ctx(t)
	for g.Waiting() != n {
		select {
		case <-ctx.Done():
			t.Fatalf("%d jobs wait, want %d", g.Waiting(), n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
