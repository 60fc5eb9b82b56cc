package watch

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// The real reportctl binary, as systemd runs it: SIGTERM ends it with exit
// status 0 after saving its state, and the next start publishes nothing.
func TestSIGTERMExitsZeroAndKeepsState(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	want := map[string][]byte{"a.md": write(t, filepath.Join(dir, "a.md"), "# a\n")}

	start := func() (*exec.Cmd, *events) {
		ev := &events{}
		cmd := exec.Command(reportctlBin, "--server", shared.URL(), "--json", "watch", dir,
			"--project", strconv.FormatInt(project, 10), "--state", state, "--settle", testSettle)
		cmd.Stdout = ev
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, ev
	}
	stop := func(cmd *exec.Cmd) {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("after SIGTERM: %v, want exit status 0", err)
		}
	}

	cmd, ev := start()
	ev.waitEvent(t, evPublished, 1)
	ev.waitEvent(t, evIdle, 1)
	stop(cmd)
	if ev.count(evStopped) != 1 {
		t.Fatalf("no clean stop logged:\n%s", ev)
	}

	cmd, ev = start()
	ev.waitEvent(t, evIdle, 1)
	stop(cmd)
	if n := ev.count(evPublished); n != 0 {
		t.Fatalf("published %d after a restart", n)
	}
	assertPublished(t, shared, svc, project, want)
}
