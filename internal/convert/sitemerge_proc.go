package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/reportd/reportd/internal/report"
)

// Merging the printed pages of a site (scope=site) holds every page's PDF
// in pdfcpu's memory at once, for up to Config.SiteMaxPages pages. Like
// selecting pages of a stored PDF (pdfpages_proc.go), it runs in a child
// process, the running binary with mergeChildEnv set, whose data segment
// is capped at Config.MaxWorkerRSS and which is killed at the job's
// deadline. The caller holds the job's slot of the Chromium gate.

// mergeChildEnv makes the process merge PDFs: argv is out; stdin carries
// the parts as JSON ([]sitePart).
const mergeChildEnv = "REPORTD_MERGE_PDF_CHILD"

// mergeChildStall makes the child wait until killed; tests use it to stand
// in for a merge that takes too long.
const mergeChildStall = "REPORTD_MERGE_PDF_TEST_STALL"

func init() {
	if os.Getenv(mergeChildEnv) != "1" {
		return
	}
	os.Exit(mergeChild(os.Args[1:]))
}

// mergeChild merges and exits 0, or writes "<kind>\n<message>" to stdout
// and exits 1.
func mergeChild(args []string) int {
	if n, err := strconv.ParseUint(os.Getenv(trimChildMaxData), 10, 64); err == nil && n > 0 {
		syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n})
	}
	if os.Getenv(mergeChildStall) == "1" {
		select {} // until the parent kills it at the deadline
	}
	var parts []sitePart
	if len(args) != 1 || json.NewDecoder(os.Stdin).Decode(&parts) != nil {
		fmt.Fprintf(os.Stdout, "%s\nbad arguments", report.Internal)
		return 1
	}
	err := mergePDFs(parts, args[0])
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

// mergeParts merges parts into out in a child, bounded as described above.
func (m *Manager) mergeParts(parts []sitePart, out string) error {
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.JobTimeout)
	defer cancel()
	in, err := json.Marshal(parts)
	if err != nil {
		return report.Wrap(report.Internal, err, "cannot list the printed pages")
	}
	cmd := exec.Command(selfExe, out)
	cmd.Env = append(os.Environ(), mergeChildEnv+"=1", trimChildMaxData+"="+strconv.FormatInt(m.cfg.MaxWorkerRSS, 10))
	cmd.Stdin = bytes.NewReader(in)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return report.Wrap(report.Conversion, err, "cannot start merging the site's pages")
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
				fmt.Sprintf("merging the site's %d pages took longer than %s", len(parts), m.cfg.JobTimeout))
		}
		return report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
	if err == nil {
		return nil
	}
	if kind, msg, ok := strings.Cut(stdout.String(), "\n"); ok && kind != "" {
		return report.Errorf(report.Kind(kind), "%s", msg)
	}
	return report.Wrap(report.Conversion, err, fmt.Sprintf(
		"merging the site's pages failed (it may need more than %d MiB)", m.cfg.MaxWorkerRSS>>20))
}
