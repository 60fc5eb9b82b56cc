//go:build !linux

package files

import "os"

// startWriteback is a no-op where sync_file_range(2) does not exist; the
// final fsync does all the work.
func startWriteback(f *os.File, off, n int64) {}
