package engine

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// OverMemory reports whether the process tree of pid uses more than limit
// bytes. Plain RSS, which is cheap, overcounts shared pages; only when it is
// over the limit is the exact PSS, which costs more to read, consulted.
func OverMemory(pid int, limit int64) bool {
	return treeMem(pid, false) > limit && treeMem(pid, true) > limit
}

// TreeRSS returns the memory, in bytes, of pid and all its descendants: a
// browser or an office suite is several processes. Each process counts its
// proportional set size (PSS: shared pages split among their users), so
// Chromium's zygote-forked helpers are not counted many times over; plain
// RSS is the fallback where smaps_rollup is unavailable.
func TreeRSS(pid int) int64 { return treeMem(pid, true) }

func treeMem(pid int, pss bool) int64 {
	if pid <= 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	children := map[int][]int{}
	rss := map[int]int64{}
	page := int64(os.Getpagesize())
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 22 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pages, _ := strconv.ParseInt(string(f[21]), 10, 64)
		children[ppid] = append(children[ppid], p)
		rss[p] = pages * page
	}
	var total int64
	stack := []int{pid}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var v int64
		if pss {
			v = pssOf(p)
		}
		if v > 0 {
			total += v
		} else {
			total += rss[p]
		}
		stack = append(stack, children[p]...)
	}
	return total
}

// KillGroup kills every process of the group that pgid leads. Engines start
// in their own group so that this reaches helpers they spawned too. pgid
// must be a child of this process (ours); the signal goes through a pidfd
// (pidfd_linux.go), so it reaches the group of the very process checked.
//
// Once the leader has been reaped its group may still have members (the
// helpers of an unsandboxed engine): they are killed too, when the group is
// known to be ours (leaderlessGroupOurs). A PID that a process other than
// our child holds means the group is gone: the kernel gives a group's ID to
// no new process while the group has a member.
func KillGroup(pgid int) {
	r, ok := pin(pgid)
	if !ok {
		if leaderlessGroupOurs(pgid) {
			unix.Kill(-pgid, unix.SIGKILL)
		}
		return
	}
	defer r.close()
	if ours(pgid) {
		r.killGroup()
	}
}

// leaderlessGroupOurs reports whether pgid is the ID of a process group
// whose leader is gone (no process has the PID pgid) and whose members are
// in this process's session: descendants of this daemon (engines start
// with Setpgid, not in a session of their own). While a group has members
// its ID stays taken, so such a group is the one our leader led, unless it
// emptied and PIDs wrapped round to pgid since, and a process of our own
// session led a group with it and was reaped in turn.
func leaderlessGroupOurs(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pgid)); err == nil {
		return false // a process has the PID: it leads the group, if any
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, s := groupOf(p); g == pgid && s == sid {
			return true
		}
	}
	return false
}

// groupOf returns a process's process group and session, or zeros.
func groupOf(pid int) (pgrp, sid int) {
	f := statFields(pid)
	if len(f) < 4 {
		return 0, 0
	}
	pgrp, _ = strconv.Atoi(string(f[2]))
	sid, _ = strconv.Atoi(string(f[3]))
	return pgrp, sid
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (which may hold spaces and parentheses): state, ppid, pgrp,
// session, ...; nil if the process is gone.
func statFields(pid int) [][]byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// ours reports whether pid is still a child of this process that has not
// been reaped (running, or a zombie). Only then is pid, and the process
// group it leads, surely the engine process it was: once reaped (its
// waiter, exec.Cmd.Wait or chromedp's, may run first), the kernel may give
// the PID to any new process, another engine's browser or an unrelated
// program, and a kill by PID would hit that one. What a reaped engine left
// behind is found by an argument only it carries (KillByArg) instead.
func ours(pid int) bool {
	return pid > 0 && parentOf(pid) == os.Getpid()
}

// alive reports whether a process exists (a zombie counts as gone).
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// pssOf reads a process's PSS from /proc/<pid>/smaps_rollup, or returns 0.
func pssOf(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// ShmLarge reports whether /dev/shm can hold Chromium's shared memory
// (at least 1 GiB); Docker's default is 64 MiB, where Chromium crashes.
func ShmLarge() bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil {
		return false
	}
	return int64(st.Blocks)*int64(st.Bsize) >= 1<<30
}

// StartLocked starts cmd from a goroutine locked to its OS thread, which
// then waits for it: Pdeathsig fires when the thread that forked the child
// exits, and the Go runtime may end an unlocked thread at any time. The
// thread stays until the process has exited; the channel closes then.
func StartLocked(cmd *exec.Cmd) (<-chan struct{}, error) {
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(exited)
	}()
	return exited, <-started
}

// HostPID returns the PID, as seen here, of the process among root and its
// descendants whose PID in its own namespace is nspid (a sandboxed helper
// reports PIDs of its namespace); 0 if there is none.
func HostPID(root, nspid int) int {
	children := procChildren()
	stack := []int{root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err == nil {
			for line := range bytes.SplitSeq(b, []byte{'\n'}) {
				if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
					f := bytes.Fields(rest)
					if len(f) > 0 && string(f[len(f)-1]) == strconv.Itoa(nspid) {
						return p
					}
				}
			}
		}
		stack = append(stack, children[p]...)
	}
	return 0
}

// procChildren maps each process to its children.
func procChildren() map[int][]int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(p); ppid > 0 {
			children[ppid] = append(children[ppid], p)
		}
	}
	return children
}

// parentOf returns a process's parent PID, or 0.
func parentOf(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
}

// KillTree kills the process group that pid leads and every descendant of
// pid (a sandbox's processes are in no group of ours), then waits, a few
// seconds at most, until they are gone: when it returns, no engine process
// writes in a directory about to be removed. pid must be a child of this
// process (ours). Every process of the tree is pinned (pidfd_linux.go) and
// checked to be still where it was found before any is killed: a kill
// re-parents the rest, and a PID reused meanwhile is never signalled. Once
// pid has been reaped, only its group is left to kill (KillGroup).
func KillTree(pid int) {
	root, ok := pin(pid)
	if !ok {
		KillGroup(pid)
		return
	}
	defer root.close()
	if !ours(pid) {
		return
	}
	tree := []pidRef{root}
	for _, p := range descendantsWithParents(pid) {
		r, ok := pin(p.pid)
		if !ok {
			continue
		}
		if parentOf(p.pid) != p.parent {
			r.close() // gone, and the PID taken by another
			continue
		}
		defer r.close()
		tree = append(tree, r)
	}
	root.killGroup()
	for _, r := range tree {
		r.kill()
	}
	for _, r := range tree {
		r.wait(5 * time.Second)
	}
}

// reap kills the tree of pid and waits until exited is closed and replies
// (its output, read line by line) is drained to EOF. A process forked
// while the tree was read escapes KillTree (it is re-parented) and may hold
// the output open for ever; every second, stray, an argument that only
// this engine's processes carry, finds and kills such processes. After
// wait it gives up, logs, and returns anyway: a kill never hangs.
func Reap(pid int, exited <-chan struct{}, replies <-chan string, stray string, wait time.Duration, log *slog.Logger) {
	KillTree(pid)
	KillByArg(stray)
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for exited != nil || replies != nil {
		select {
		case <-exited:
			exited = nil
		case _, ok := <-replies:
			if !ok {
				replies = nil
			}
		case <-tick.C:
			KillTree(pid)
			if n := KillByArg(stray); n > 0 {
				log.Warn("engine processes outlived their kill; killed", "count", n, "arg", stray)
			}
			if time.Now().After(deadline) {
				log.Error("engine did not end after its kill; going on without it", "pid", pid)
				return
			}
		}
	}
}

// KillByArg kills every process one of whose arguments is arg: a process
// that a kill of its tree missed (forked while the tree was read, then
// re-parented) is still found by an argument only it carries.
func KillByArg(arg string) (killed int) {
	entries, _ := os.ReadDir("/proc")
	want := []byte(arg)
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if hasArg(b, want) && killIf(p, func() bool {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			return err == nil && hasArg(b, want)
		}) {
			killed++
		}
	}
	return killed
}

// hasArg reports whether cmdline (NUL-separated) holds the argument arg.
func hasArg(cmdline, arg []byte) bool {
	for a := range bytes.SplitSeq(cmdline, []byte{0}) {
		if bytes.Equal(a, arg) {
			return true
		}
	}
	return false
}

// DescendantsOf lists the processes under root, root excluded.
func DescendantsOf(root int) []int {
	var out []int
	for _, p := range descendantsWithParents(root) {
		out = append(out, p.pid)
	}
	return out
}

// proc is a process and the parent it had when /proc was read.
type proc struct{ pid, parent int }

// descendantsWithParents lists the processes under root, root excluded,
// each with its parent.
func descendantsWithParents(root int) []proc {
	children := procChildren()
	var out []proc
	stack := []int{root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			out = append(out, proc{pid: c, parent: p})
		}
		stack = append(stack, children[p]...)
	}
	return out
}
