package engine

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// startTree starts sh in a group of its own running script, which prints
// the PIDs it starts, one a line, then "up"; it returns sh and those PIDs.
func startTree(t *testing.T, script string) (*exec.Cmd, []int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "up" {
		p, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			t.Fatalf("line %q", sc.Text())
		}
		pids = append(pids, p)
	}
	t.Cleanup(func() {
		for _, p := range pids {
			if Alive(p) {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
	return cmd, pids
}

// KillTree kills a whole tree of real processes: sleeps in the engine's
// group, one in a session of its own (as a sandbox's are in no group of
// ours) and one a level further down; all are gone when it returns.
func TestKillTreeKillsEveryProcess(t *testing.T) {
	cmd, pids := startTree(t, `sleep 600 & echo $!
setsid sleep 600 & echo $!
sh -c 'sleep 600 & echo $!; wait' & echo $!
sleep 0.2; echo up; wait`)
	if len(pids) != 4 {
		t.Fatalf("started %v, want 4 processes", pids)
	}
	eventually(t, "the tree complete", func() bool { return len(DescendantsOf(cmd.Process.Pid)) >= len(pids) })
	for _, p := range pids {
		if !isDescendant(cmd.Process.Pid, p) {
			t.Fatalf("process %d not in the tree: the test would prove nothing", p)
		}
	}
	KillTree(cmd.Process.Pid)
	for _, p := range append([]int{cmd.Process.Pid}, pids...) {
		if Alive(p) {
			t.Errorf("process %d alive after KillTree", p)
		}
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the tree's root was not killed: %v", err)
	}
}

// A group whose leader exited and was reaped can still have members: an
// unsandboxed engine's helpers. KillGroup kills them (it once did nothing
// once the leader was reaped), and with a live leader it kills the leader
// and its group.
func TestKillGroupKillsLeaderlessGroup(t *testing.T) {
	cmd, pids := startTree(t, `sleep 600 & echo $!; echo up`)
	if err := cmd.Wait(); err != nil { // the leader exits and is reaped
		t.Fatal(err)
	}
	if len(pids) != 1 || !Alive(pids[0]) {
		t.Fatalf("the group's member %v is not running", pids)
	}
	KillGroup(cmd.Process.Pid)
	eventually(t, "the leaderless group's member killed", func() bool { return !Alive(pids[0]) })

	cmd, pids = startTree(t, `sleep 600 & echo $!; echo up; wait`)
	KillGroup(cmd.Process.Pid)
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the group's leader was not killed: %v", err)
	}
	eventually(t, "the group's member killed", func() bool { return !Alive(pids[0]) })
}
