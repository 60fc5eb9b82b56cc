package engine

import (
	"os/exec"
	"syscall"

	"github.com/moby/sys/reexec"
)

// ChildCommand is the command that starts child name with args, in a
// process group of its own (so a kill reaches everything it started) and
// killed when the starting thread exits.
func ChildCommand(name string, args ...string) *exec.Cmd {
	cmd := reexec.Command(append([]string{name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}
