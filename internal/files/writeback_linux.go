package files

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing a range of f to disk
// without waiting for it; the final fsync still makes the file durable.
// It is only a hint, so errors are ignored.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
