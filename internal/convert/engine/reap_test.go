package engine

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A process that escaped its engine's tree (forked, then re-parented when
// its parent exited) and holds the engine's output open is found by its
// argument and killed: reap returns instead of waiting for ever, the way a
// worker's kill once hung when soffice was forked during the kill.
func TestReapKillsEscapedProcessHoldingOutput(t *testing.T) {
	stray := fmt.Sprintf("reportd-reap-test-%d", time.Now().UnixNano())
	t.Cleanup(func() { KillByArg(stray) })
	out, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The subshell starts the straggler in a session of its own and exits:
	// the straggler is no descendant of sh and in no group of its.
	// The argument reaches the straggler alone (through the environment).
	cmd := exec.Command("sh", "-c", `(setsid python3 -c "import time; time.sleep(300)" "$STRAY" &); echo up; exec sleep 300`)
	cmd.Env = append(os.Environ(), "STRAY="+stray)
	cmd.Stdout = outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	exited, err := StartLocked(cmd)
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	replies := make(chan string, 1)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			replies <- sc.Text()
		}
	}()
	if line := <-replies; line != "up" {
		t.Fatalf("first line %q", line)
	}
	straggler := 0
	for deadline := time.Now().Add(10 * time.Second); straggler == 0 && time.Now().Before(deadline); {
		straggler = findByArg(stray)
		time.Sleep(20 * time.Millisecond)
	}
	if straggler == 0 {
		t.Fatal("the straggler never started")
	}
	if straggler == cmd.Process.Pid || isDescendant(cmd.Process.Pid, straggler) {
		t.Fatal("the straggler is still in the tree: the test would prove nothing")
	}
	done := make(chan struct{})
	go func() {
		Reap(cmd.Process.Pid, exited, replies, stray, 20*time.Second, slog.New(slog.DiscardHandler))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("reap did not return")
	}
	for range 200 {
		if !Alive(straggler) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("straggler %d still alive after reap", straggler)
}

func findByArg(arg string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && containsArg(b, arg) {
			var p int
			fmt.Sscan(e.Name(), &p)
			return p
		}
	}
	return 0
}

func containsArg(cmdline []byte, arg string) bool {
	start := 0
	for i, c := range cmdline {
		if c == 0 {
			if string(cmdline[start:i]) == arg {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func isDescendant(root, pid int) bool {
	for _, p := range DescendantsOf(root) {
		if p == pid {
			return true
		}
	}
	return false
}
