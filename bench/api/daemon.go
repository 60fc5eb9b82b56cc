package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

// bench holds the run's state: the scratch dirs, the running daemon and
// the results gathered so far.
type bench struct {
	bin, work, dataDir string
	ctl                string // reportctl binary; empty: the reportctl rows are skipped
	sz                 sizes

	// env is added to the daemon's environment (REPORTD_* settings).
	env []string

	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port
	client *http.Client
	res    results
}

// startDaemon runs `reportd serve` on a free loopback port, exactly as an
// operator would (default config, info log to a file), and returns how
// long it took from exec to the first ping answer.
func (b *bench) startDaemon(ctx context.Context) (time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	logFile, err := os.OpenFile(filepath.Join(b.work, "reportd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// An empty config and a clean environment: no /etc/reportd/reportd.yaml
	// and no stray REPORTD_* variable of the caller's changes the figures.
	cmd := exec.Command(b.bin, "serve", "--config", os.DevNull, "--addr", addr, "--data-dir", b.dataDir)
	// b.env comes last: exec keeps the last value of a repeated variable.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir(), "REPORTD_DASHBOARD=false",
		"REPORTD_CONTENT_ADDR=127.0.0.1:0"}, b.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	b.base = "http://" + addr
	if b.client == nil {
		// Large write buffers keep the client's share of the 2 cores small
		// during the 1 GiB upload: it is the daemon being measured.
		b.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true,
			WriteBufferSize: 256 << 10, ReadBufferSize: 64 << 10}}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	b.cmd = cmd
	// Poll as fast as the kernel refuses: the figure is exec -> first answer.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		resp, err := b.client.Get(b.base + "/api/reports/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	b.stopDaemon()
	return 0, fmt.Errorf("reportd did not answer ping within 60s (see %s)", logFile.Name())
}

// stopDaemon asks the daemon to shut down and waits for it, so the bbolt
// file is free for the next seeding step.
func (b *bench) stopDaemon() {
	if b.cmd == nil {
		return
	}
	benchkit.Stop(b.cmd)
	b.cmd = nil
	if b.client != nil {
		b.client.CloseIdleConnections()
	}
}

// rss is the daemon's resident set in bytes, from /proc.
func (b *bench) rss() (int64, error) {
	return benchkit.ProcStatus(b.cmd.Process.Pid, "VmRSS")
}

// cpuTime is the user+system CPU the process has used, from /proc/PID/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
