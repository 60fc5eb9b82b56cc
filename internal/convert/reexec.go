package convert

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/moby/sys/reexec"
)

// The conversion children (childproc.go; the Markdown renderer registers
// itself in markdown/child.go) are the running binary (reexec.Self:
// /proc/self/exe, which survives a package upgrade replacing the file)
// started again with one of these names as argv[0].
// Registering takes nothing over: a binary becomes a child only through
// reexec.Init, which every binary that may start one calls first thing,
// in main (cmd/reportd, bench/convert) or TestMain (every test package that
// links this one).
const (
	trimChildName  = "reportd-trim-pdf"  // page selection: argv is src, ranges, out
	mergeChildName = "reportd-merge-pdf" // site merge: argv is out; stdin carries the parts as JSON
)

func init() {
	reexec.Register(trimChildName, func() { os.Exit(trimChild(os.Args[1:])) })
	reexec.Register(mergeChildName, func() { os.Exit(mergeChild(os.Args[1:])) })
}

// childCommand is the command that starts child name with args, in a
// process group of its own (so a kill reaches everything it started) and
// killed when the starting thread exits.
func childCommand(name string, args ...string) *exec.Cmd {
	cmd := reexec.Command(append([]string{name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}
