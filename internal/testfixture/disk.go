package testfixture

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of the given size (e.g. "4m") in a temp folder,
// unmounted when the test ends, or skips: only root (or CAP_SYS_ADMIN) may
// mount, and CI containers often forbid it.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0750"); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill (%v): run as root to test a full disk", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
