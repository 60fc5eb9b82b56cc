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
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Work whose cost nothing bounds in advance (pdfcpu over an uploaded PDF,
// merging a site's printed pages) runs in a child process: the running
// binary started again as a registered child (reexec.Register), its data
// segment capped at convert.max_worker_rss, killed with its process group at the job's
// deadline. The child reports a failure as "<kind>\n<message>" on stdout.

// childMaxData carries the cap on a child's data segment, in bytes.
const childMaxData = "REPORTD_TRIM_PDF_MAX_DATA"

// ChildTask is one run of such a child.
type ChildTask struct {
	Name  string    // the registered child (reexec.Register) that does the work
	Args  []string  // the child's argv after the program
	Stdin io.Reader // nil for none
	// The messages: "cannot start" error, "<Slow> took longer than …" at
	// the deadline, "<Failed> failed (it may need more than … MiB)".
	Start, Slow, Failed string
}

// RunChild runs t in a child bounded as described above (its data segment
// capped at maxData bytes; 0: no cap), until it exits, timeout passes or
// ctx ends.
func RunChild(ctx context.Context, timeout time.Duration, maxData int64, t ChildTask) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := ChildCommand(t.Name, t.Args...)
	cmd.Env = append(os.Environ(), childMaxData+"="+strconv.FormatInt(maxData, 10))
	if t.Stdin != nil {
		cmd.Stdin = t.Stdin
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		return report.Wrap(report.Conversion, err, t.Start)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		KillGroup(cmd.Process.Pid)
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return report.Wrap(report.Conversion, ctx.Err(),
				fmt.Sprintf("%s took longer than %s", t.Slow, timeout))
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
		"%s failed (it may need more than %d MiB)", t.Failed, maxData>>20))
}

// ErrChildArgs is what a child says when its arguments are not what the
// parent sends.
var ErrChildArgs = report.Errorf(report.Internal, "bad arguments")

// ChildMain is the child's side: it caps its data segment, waits to be
// killed when stall is set (tests stand in for slow work so), runs work and
// returns the exit code, writing "<kind>\n<message>" to stdout on failure.
func ChildMain(stall bool, work func() error) int {
	if n, err := strconv.ParseUint(os.Getenv(childMaxData), 10, 64); err == nil && n > 0 {
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
