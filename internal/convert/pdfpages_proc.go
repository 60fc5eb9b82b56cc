package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/reportd/reportd/internal/report"
)

// Selecting pages of a stored PDF (pageRanges) runs pdfcpu over an uploaded
// file, whose cost nothing bounds in advance: a PDF with a huge or cyclic
// object graph can take pdfcpu minutes and gigabytes. So it runs like the
// engines' jobs: under the conversion gate (one of the Chromium slots, served
// project by project), on inputs up to Config.TrimMaxBytes, in a child
// process (the running binary with trimChildEnv set) whose data segment is
// capped at Config.MaxWorkerRSS and which is killed at the job's deadline.

// trimChildEnv makes the process select pages: argv is src, ranges, out.
const trimChildEnv = "REPORTD_TRIM_PDF_CHILD"

// trimChildMaxData carries the child's RLIMIT_DATA, in bytes.
const trimChildMaxData = "REPORTD_TRIM_PDF_MAX_DATA"

// trimChildStall makes the child wait that many milliseconds before it
// works; tests use it to stand in for a PDF that takes pdfcpu too long.
const trimChildStall = "REPORTD_TRIM_PDF_TEST_STALL_MS"

func init() {
	if os.Getenv(trimChildEnv) != "1" {
		return
	}
	os.Exit(trimChild(os.Args[1:]))
}

// trimChild selects the pages and exits 0, or writes "<kind>\n<message>" to
// stdout and exits 1.
func trimChild(args []string) int {
	if n, err := strconv.ParseUint(os.Getenv(trimChildMaxData), 10, 64); err == nil && n > 0 {
		syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n})
	}
	if ms, err := strconv.Atoi(os.Getenv(trimChildStall)); err == nil && ms > 0 {
		select {} // until the parent kills it at the deadline
	}
	if len(args) != 3 {
		fmt.Fprintf(os.Stdout, "%s\nbad arguments", report.Internal)
		return 1
	}
	err := trimPDF(args[0], args[1], args[2])
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

// trimDoc writes the pages of job's stored PDF that job.Print.PageRanges
// selects to out, bounded as described above.
func (m *Manager) trimDoc(job Job, out string) error {
	fi, err := os.Stat(job.Src)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	if fi.Size() > m.cfg.TrimMaxBytes {
		return report.Errorf(report.Conversion, "the PDF is too large to select pages from (%d bytes, at most %d)",
			fi.Size(), m.cfg.TrimMaxBytes)
	}
	leave, err := m.chrome.gate.enter(m.ctx, job.ProjectID)
	if err != nil {
		return err
	}
	defer leave()
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.JobTimeout)
	defer cancel()
	cmd := exec.Command(selfExe, job.Src, job.Print.PageRanges, out)
	cmd.Env = append(os.Environ(), trimChildEnv+"=1", trimChildMaxData+"="+strconv.FormatInt(m.cfg.MaxWorkerRSS, 10))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return report.Wrap(report.Conversion, err, "cannot start the page selection")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd.Process.Pid)
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return report.Wrap(report.Conversion, ctx.Err(),
				fmt.Sprintf("selecting pages of the PDF took longer than %s", m.cfg.JobTimeout))
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
		"selecting pages of the PDF failed (it may need more than %d MiB)", m.cfg.MaxWorkerRSS>>20))
}
