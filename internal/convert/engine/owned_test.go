package engine

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A PID that is no longer an unreaped child of this process may belong to
// anything by now (PIDs are reused): KillTree and KillGroup leave it alone.
// Here the process is a live one that was never ours: a sleep whose parent
// shell exited, re-parented away from this process.
func TestKillLeavesProcessesNotOurs(t *testing.T) {
	out, err := exec.Command("sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	KillTree(pid)
	KillGroup(pid)
	time.Sleep(100 * time.Millisecond)
	if !Alive(pid) {
		t.Fatalf("KillTree killed process %d, which is not a child of this process", pid)
	}

	// A child of ours, not yet reaped, is killed with its group.
	cmd := exec.Command("sleep", "120")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	KillTree(cmd.Process.Pid)
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("our child was not killed: %v", err)
	}
}
