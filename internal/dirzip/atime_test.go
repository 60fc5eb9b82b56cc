//go:build linux

package dirzip

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func atime(t *testing.T, p string) time.Time {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Atim.Unix())
}

// Archiving and hashing leave the files' access times alone (O_NOATIME):
// a file whose atime is older than its mtime gets a new one from a plain
// read on a relatime mount (checked first on a control file; on a
// noatime mount there is nothing to test).
func TestArchiveKeepsAccessTimes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.html", pageText(1, 5000))
	write(t, dir, "big.bin", noise(3, 2<<20)) // streamed
	control := filepath.Join(t.TempDir(), "control")
	if err := os.WriteFile(control, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, p := range []string{filepath.Join(dir, "a.html"), filepath.Join(dir, "big.bin"), control} {
		if err := os.Chtimes(p, old, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.ReadFile(control); err != nil {
		t.Fatal(err)
	}
	if !atime(t, control).After(old.Add(time.Second)) {
		t.Skip("a plain read does not update access times here (noatime mount)")
	}
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	archiveOf(t, tr)
	if _, err := tr.Hash(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.html", "big.bin"} {
		if at := atime(t, filepath.Join(dir, n)); at.After(old.Add(time.Second)) {
			t.Errorf("%s: access time moved from %v to %v", n, old, at)
		}
	}
}
