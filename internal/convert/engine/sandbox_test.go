package engine

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

func needSandbox(t *testing.T) *Sandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap)")
	}
	s := NewSandbox("", false, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Ready(); err != nil {
		t.Fatalf("bubblewrap is installed but cannot sandbox here: %v", err)
	}
	return s
}

// TestSandboxConfines runs a program inside the sandbox and asks it, from
// there, what it can see and reach.
func TestSandboxConfines(t *testing.T) {
	s := needSandbox(t)
	// A stand-in for the data directory: database and serve key.
	data := t.TempDir()
	secret := filepath.Join(data, "reportd.serve.json")
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd() // the source tree, outside /tmp
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var hits atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	t.Setenv("REPORTD_AUTH_TOKEN", "daemon-env-secret")
	job := t.TempDir()
	script := fmt.Sprintf(`
import os, socket
for p in [%q, %q, %q]:
    try:
        os.listdir(p) if os.path.isdir(p) else open(p).read()
        print("SEES", p)
    except OSError:
        print("HIDDEN", p)
try:
    socket.create_connection(("127.0.0.1", %d), timeout=5).close()
    print("CONNECTED")
except OSError as e:
    print("NOCONNECT", e)
print("ENV", sorted(os.environ))
open(os.path.join(%q, "written"), "w").write("from inside")
print("WROTE")
`, secret, data, wd, ln.Addr().(*net.TCPAddr).Port, job)
	path, args := s.Command(Jail{Argv: []string{"/usr/bin/python3", "-c", script}, RW: []string{job}, Env: EngineEnv(job)})
	out, err := exec.Command(path, args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed program failed: %v\n%s", err, out)
	}
	got := string(out)
	for _, p := range []string{secret, data, wd} {
		if !strings.Contains(got, "HIDDEN "+p) {
			t.Errorf("the sandbox sees %s:\n%s", p, got)
		}
	}
	if !strings.Contains(got, "NOCONNECT") || hits.Load() != 0 {
		t.Errorf("the sandbox reached a loopback listener (%d accepts):\n%s", hits.Load(), got)
	}
	if strings.Contains(got, "REPORTD_AUTH_TOKEN") {
		t.Errorf("the daemon's environment leaked into the sandbox:\n%s", got)
	}
	if b, err := os.ReadFile(filepath.Join(job, "written")); err != nil || string(b) != "from inside" {
		t.Errorf("the job directory is not writable from inside: %v\n%s", err, got)
	}
}

// TestSandboxUnavailable: without bubblewrap, engines refuse to start with a
// clear error, unless the configuration allows running them unsandboxed.
func TestSandboxUnavailable(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := NewSandbox("/nonexistent/bwrap", false, nil, log)
	err := s.Ready()
	re := testfixture.WantKind(t, err, report.Conversion)
	for _, want := range []string{"sandbox", "/nonexistent/bwrap", "convert.unsandboxed"} {
		if !strings.Contains(re.Message, want) {
			t.Errorf("message %q lacks %q", re.Message, want)
		}
	}
	s = NewSandbox("/nonexistent/bwrap", true, nil, log)
	if err := s.Ready(); err != nil {
		t.Fatalf("unsandboxed allowed, yet: %v", err)
	}
	if path, args := s.Command(Jail{Argv: []string{"/bin/true", "x"}}); path != "/bin/true" || len(args) != 2 {
		t.Errorf("unsandboxed command = %s %q, want /bin/true itself", path, args)
	}
}
