package engine

import (
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The kills here find processes by PID in /proc, check that each is the one
// meant (a child of ours, a renderer under its browser, a process with an
// argument), and signal it. Between the check and a kill(2) the process may
// be reaped and its PID given to another. So a process is pinned first: a
// pidfd refers to one process for good, however its PID is reused; the check
// runs after it is opened (if the PID changed hands meanwhile, the pidfd's
// process is gone and its signal reaches nobody), and the signal goes
// through it.

// pidRef is one pinned process: a pidfd, or, where the kernel gives none
// (fd < 0), the PID alone as kill(2) takes it.
type pidRef struct{ pid, fd int }

// pin pins the process pid; ok is false when no process has that PID.
func pin(pid int) (r pidRef, ok bool) {
	if pid <= 0 {
		return pidRef{}, false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		return pidRef{pid: pid, fd: fd}, true
	case errors.Is(err, unix.ESRCH), errors.Is(err, unix.EINVAL):
		// EINVAL: the PID is held only as a process group's or a
		// session's ID, by no process.
		return pidRef{}, false
	}
	// ENOSYS (Linux before 5.3), EPERM (a seccomp filter that does not
	// know the call), EMFILE: the PID alone, as before pidfds, rather than
	// leave an engine running.
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		return pidRef{}, false
	}
	return pidRef{pid: pid, fd: -1}, true
}

func (r pidRef) close() {
	if r.fd >= 0 {
		unix.Close(r.fd)
	}
}

// kill sends SIGKILL to r's process; false if it is gone.
func (r pidRef) kill() bool {
	if r.fd >= 0 {
		return unix.PidfdSendSignal(r.fd, unix.SIGKILL, nil, 0) == nil
	}
	return unix.Kill(r.pid, unix.SIGKILL) == nil
}

// killGroup sends SIGKILL to the process group that r's process leads.
func (r pidRef) killGroup() {
	if r.fd >= 0 {
		// The group of this very process, even if it is reaped meanwhile.
		err := unix.PidfdSendSignal(r.fd, unix.SIGKILL, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
		if !errors.Is(err, unix.EINVAL) {
			return // sent, or the group is empty (ESRCH)
		}
		// EINVAL: Linux before 6.9 has no group signal by pidfd. The
		// leader was checked ours a moment ago; kill(2) it is.
	}
	unix.Kill(-r.pid, unix.SIGKILL)
}

// wait waits, d at most, until r's process has exited (a zombie counts as
// gone, as in Alive).
func (r pidRef) wait(d time.Duration) {
	end := time.Now().Add(d)
	if r.fd < 0 {
		for Alive(r.pid) && time.Now().Before(end) {
			time.Sleep(10 * time.Millisecond)
		}
		return
	}
	// A pidfd polls readable once its process has exited.
	for {
		left := time.Until(end)
		if left <= 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
			return
		}
	}
}

// killIf kills the process pid if check, run once it is pinned, says it is
// the one meant; true if it was killed.
func killIf(pid int, check func() bool) bool {
	r, ok := pin(pid)
	if !ok {
		return false
	}
	defer r.close()
	return check() && r.kill()
}
