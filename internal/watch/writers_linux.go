package watch

import (
	"bufio"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openForWriting reports which of paths some process holds open for
// writing. It closes the gap that the settle time alone leaves: a writer
// that pauses for longer than --settle with the file still open is not
// finished. The answer is best effort and never blocks publishing forever
// (--max-wait still applies).
//
// The cheap test is a read lease: the kernel refuses one (EAGAIN) exactly
// when the file is open for writing, by anyone, this process included. It
// needs the file's owner or CAP_LEASE and a file system with leases; for
// files where it cannot answer, /proc/*/fd is walked instead.
func openForWriting(paths []string) map[string]bool {
	busy := map[string]bool{}
	var unknown []string
	for _, p := range paths {
		switch open, ok := leaseSaysOpen(p); {
		case !ok:
			unknown = append(unknown, p)
		case open:
			busy[p] = true
		}
	}
	if len(unknown) > 0 {
		maps.Copy(busy, procOpenForWriting(unknown))
	}
	return busy
}

// leaseSaysOpen takes and at once drops a read lease on path. While held,
// a writer's open would wait for us; we hold it for two system calls.
func leaseSaysOpen(path string) (open, ok bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, false
	}
	defer f.Close()
	fd := int(f.Fd())
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case errors.Is(err, unix.EAGAIN):
		return true, true
	case err != nil:
		return false, false
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	return false, true
}

// foldersOpenForWriting reports which of the folders (sites) hold a file,
// at any depth, that some process has open for writing: /proc only, since
// a lease per file of a large site would cost more than the walk.
func foldersOpenForWriting(dirs []string) map[string]bool {
	return procWriters(func(target string) (string, bool) {
		for _, d := range dirs {
			if strings.HasPrefix(target, d+string(filepath.Separator)) {
				return d, true
			}
		}
		return "", false
	})
}

// procOpenForWriting reads /proc/*/fd and fdinfo. Processes we may not
// inspect are skipped.
func procOpenForWriting(paths []string) map[string]bool {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	return procWriters(func(target string) (string, bool) { return target, want[target] })
}

// procWriters walks /proc/*/fd; match maps an open file to the key it
// makes busy.
func procWriters(match func(target string) (string, bool)) map[string]bool {
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
			if err != nil {
				continue
			}
			key, ok := match(target)
			if !ok || busy[key] {
				continue
			}
			if writableFD(filepath.Join("/proc", pid, "fdinfo", fd.Name())) {
				busy[key] = true
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
