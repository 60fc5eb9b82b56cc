// Package benchkit holds what the benchmark programs under bench/ share:
// progress logging, the scratch directory, the results' output,
// percentiles, /proc figures and the seeded projects.
package benchkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Logf is progress on stderr; the figures go to stdout and the Markdown.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// WorkDir is the scratch directory: work when given, else a new temp dir
// named by prefix that done removes.
func WorkDir(work, prefix string) (dir string, done func(), err error) {
	if work != "" {
		return work, func() {}, nil
	}
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// Results prints the results' Markdown to stdout and, with mdPath, writes
// it there too.
func Results(markdown, mdPath string) error {
	fmt.Println()
	fmt.Print(markdown)
	if mdPath != "" {
		return os.WriteFile(mdPath, []byte(markdown), 0o644)
	}
	return nil
}

// Stop asks cmd's process to shut down (SIGTERM) and waits for it, killing
// it after 30 s.
func Stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// Pct is the nearest-rank percentile p (0-100) of sorted durations.
func Pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ProcStatus reads one field given in kB (VmRSS, VmHWM) of
// /proc/PID/status, in bytes.
func ProcStatus(pid int, field string) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s for pid %d", field, pid)
}

// Projects are the n projects a seeded store starts with, IDs 1 to n,
// created 60 days before now.
func Projects(n int, now time.Time) []report.Project {
	var projects []report.Project
	for i := 1; i <= n; i++ {
		desc := "Benchmark project " + strconv.Itoa(i)
		projects = append(projects, report.Project{ID: int64(i), Name: "project-" + strconv.Itoa(i),
			Description: &desc, CreatedAt: report.LocalTime{Time: now.AddDate(0, 0, -60)}})
	}
	return projects
}

// ProjectOf is the project of seeded report i (from 1): project 1 holds
// the first target reports and no more, so that its list measures the
// same rows at every size; the rest go round-robin over the other
// projects.
func ProjectOf(i, target, projects int) int64 {
	if i <= target {
		return 1
	}
	return int64(2 + (i-target-1)%(projects-1))
}
