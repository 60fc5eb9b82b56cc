package engine

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A data directory below a path the engines read (/opt here) is masked: the
// engine sees an empty directory, never the database or the serve key.
func TestSandboxHidesDataDirUnderBoundPath(t *testing.T) {
	needSandbox(t)
	base, err := os.MkdirTemp("/opt", "reportd-hide-test-")
	if err != nil {
		t.Skipf("cannot create a directory under /opt to stand in for a data directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	data := filepath.Join(base, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "reportd.db"), []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewSandbox("", false, []string{data}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Ready(); err != nil {
		t.Fatal(err)
	}
	job := t.TempDir()
	path, argv := s.Command(Jail{Argv: []string{"/bin/sh", "-c", "ls -A " + data + "; cat " + data + "/reportd.db; ls " + base},
		RW: []string{job}, Env: EngineEnv(job)})
	out, _ := exec.Command(path, argv[1:]...).CombinedOutput()
	if strings.Contains(string(out), "TOP-SECRET") || strings.Contains(string(out), "reportd.db\n") {
		t.Fatalf("the engine saw the data directory:\n%s", out)
	}
	if !strings.Contains(string(out), "data") {
		t.Fatalf("the directory around the data directory should stay visible (only the data directory is masked):\n%s", out)
	}
}
