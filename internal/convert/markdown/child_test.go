package markdown

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/moby/sys/reexec"
)

// TestMain lets the test binary be the renderer child, as cmd/reportd does.
func TestMain(m *testing.M) {
	if reexec.Init() {
		return
	}
	os.Exit(m.Run())
}

// The child, started as the daemon starts it, answers several documents
// on one pair of pipes with what Render gives in process, and exits 0 when
// its stdin closes.
func TestChildRendersOverPipes(t *testing.T) {
	cmd := reexec.Command(ChildName)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	out := bufio.NewReader(stdout)
	for _, src := range [][]byte{fixture(t), []byte("# Second\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"), nil} {
		got, err := Exchange(stdin, out, src)
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		want, err := Render(src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("child's HTML for %.20q differs from Render's (%d vs %d bytes)", src, len(got), len(want))
		}
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child exited with %v after its stdin closed", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("child still running 2 minutes after its stdin closed")
	}
}

// A dead child is a pipe error, not a *RenderError: the pool retries the
// first and blames the document for the second.
func TestExchangeWithDeadChild(t *testing.T) {
	cmd := reexec.Command(ChildName)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	_, err := Exchange(stdin, bufio.NewReader(stdout), []byte("# x"))
	var re *RenderError
	if err == nil || errors.As(err, &re) {
		t.Fatalf("Exchange with a dead child = %v, want a pipe error", err)
	}
}
