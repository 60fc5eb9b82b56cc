package watch

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// openForWriting reports which of paths some process holds open for
// writing, by reading /proc/*/fd and fdinfo. It closes the gap that the
// settle time alone leaves: a writer that pauses for longer than --settle
// with the file still open is not finished. Processes we may not inspect are
// skipped, so the answer is best effort and never blocks publishing forever
// (--max-wait still applies).
func openForWriting(paths []string) map[string]bool {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	// Our own process is included: the watcher only ever opens files for
	// reading, and a program embedding it may be the writer.
	busy := map[string]bool{}
	for _, pe := range procs {
		pid := pe.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		fdDir := filepath.Join("/proc", pid, "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !want[target] || busy[target] {
				continue
			}
			if writableFD(filepath.Join("/proc", pid, "fdinfo", fd.Name())) {
				busy[target] = true
			}
		}
	}
	return busy
}

// writableFD reads the octal "flags:" line of an fdinfo file: O_WRONLY is 1
// and O_RDWR is 2 in the access mode bits.
func writableFD(fdinfo string) bool {
	f, err := os.Open(fdinfo)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&3 != 0
		}
	}
	return false
}
