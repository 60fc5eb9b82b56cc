package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A real writer process: /proc shows the file open for writing while it
// runs and not after.
func TestOpenForWritingSeesAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slow.md")
	ro := filepath.Join(dir, "read.md")
	if err := os.WriteFile(ro, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// sh holds slow.md open for writing (fd 3) and ro open for reading.
	cmd := exec.Command("sh", "-c", `exec 3>"$1" 4<"$2"; echo ready; read line`, "sh", path, ro)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil {
		t.Fatal(err)
	}
	// Both ways of asking: the lease, and the /proc walk behind it.
	for name, check := range map[string]func([]string) map[string]bool{"lease": openForWriting, "proc": procOpenForWriting} {
		busy := check([]string{path, ro})
		if !busy[path] || busy[ro] {
			t.Fatalf("%s: busy = %v, want only %s", name, busy, path)
		}
	}
	if open, ok := leaseSaysOpen(path); !ok || !open {
		t.Fatalf("lease: open=%v ok=%v, want an answer that it is open", open, ok)
	}
	stdin.Write([]byte("\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for openForWriting([]string{path})[path] || procOpenForWriting([]string{path})[path] {
		if time.Now().After(deadline) {
			t.Fatal("still busy after the writer exited")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
