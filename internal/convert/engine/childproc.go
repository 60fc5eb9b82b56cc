package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/reportd/reportd/internal/report"
)

// Work whose cost nothing bounds in advance (pdfcpu over an uploaded PDF,
// merging a site's printed pages) runs in a child process: the running
// binary started again as a registered child (reexec.go), its data segment capped
// at Config.MaxWorkerRSS, killed with its process group at the job's
// deadline. The child reports a failure as "<kind>\n<message>" on stdout.

// childTask is one run of such a child.
type childTask struct {
	name  string    // the registered child (reexec.go) that does the work
	args  []string  // the child's argv after the program
	stdin io.Reader // nil for none
	// The messages: "cannot start" error, "<slow> took longer than …" at
	// the deadline, "<failed> failed (it may need more than … MiB)".
	start, slow, failed string
}

// runChild runs t in a child bounded as described above, until it exits or
// the Manager's job timeout passes.
func (m *Manager) runChild(t childTask) error {
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.JobTimeout)
	defer cancel()
	cmd := childCommand(t.name, t.args...)
	cmd.Env = append(os.Environ(), trimChildMaxData+"="+strconv.FormatInt(m.cfg.MaxWorkerRSS, 10))
	if t.stdin != nil {
		cmd.Stdin = t.stdin
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		return report.Wrap(report.Conversion, err, t.start)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd.Process.Pid)
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return report.Wrap(report.Conversion, ctx.Err(),
				fmt.Sprintf("%s took longer than %s", t.slow, m.cfg.JobTimeout))
		}
		return report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
	if err == nil {
		return nil
	}
	if kind, msg, ok := strings.Cut(stdout.String(), "\n"); ok && kind != "" {
		return report.Errorf(report.Kind(kind), "%s", msg)
	}
	// Killed by the memory cap (the Go runtime dies when RLIMIT_DATA stops
	// its heap), or crashed.
	return report.Wrap(report.Conversion, err, fmt.Sprintf(
		"%s failed (it may need more than %d MiB)", t.failed, m.cfg.MaxWorkerRSS>>20))
}

// errChildArgs is what a child says when its arguments are not what the
// parent sends.
var errChildArgs = report.Errorf(report.Internal, "bad arguments")

// childMain is the child's side: it caps its data segment, waits to be
// killed when stall is set (tests stand in for slow work so), runs work and
// returns the exit code, writing "<kind>\n<message>" to stdout on failure.
func childMain(stall bool, work func() error) int {
	if n, err := strconv.ParseUint(os.Getenv(trimChildMaxData), 10, 64); err == nil && n > 0 {
		syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n})
	}
	if stall {
		select {} // until the parent kills it at the deadline
	}
	err := work()
	if err == nil {
		return 0
	}
	kind, msg := report.Conversion, err.Error()
	var re *report.Error
	if errors.As(err, &re) {
		kind, msg = re.Kind, re.Message
	}
	fmt.Fprintf(os.Stdout, "%s\n%s", kind, msg)
	return 1
}
