// Package testserver runs real servers for tests: a throwaway PostgreSQL
// (pg.go: DSN, OwnPG), a throwaway S3 server (s3.go: Bucket) and nginx in
// front of a daemon (nginx.go). Call Main or Run from TestMain: they stop
// the shared servers after the tests. What the harnesses share is here: a working directory owned
// by the test process, removed by a later run when that process was killed;
// free loopback ports; a child started from a thread kept locked, so that
// its death signal follows the test process; a bounded wait until it
// answers; and a bounded stop.
package testserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/reexec"
)

// FreePort is a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// NewDir makes a directory for one server under base (pattern as in
// os.MkdirTemp) and records this process as its owner. Directories of
// earlier runs whose owner is gone are removed first.
func NewDir(base, pattern string) (string, error) {
	removeStale(base, pattern)
	dir, err := os.MkdirTemp(base, pattern)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// removeStale removes the directories of earlier runs whose test process
// is gone (killed before it could stop its server).
func removeStale(base, pattern string) {
	dirs, _ := filepath.Glob(filepath.Join(base, pattern+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

// Proc is a server started by Launch.
type Proc struct {
	Cmd  *exec.Cmd
	Done <-chan struct{} // closed when the server exits
	log  string
}

// Launch starts cmd with its output in logPath. cmd.SysProcAttr must ask
// for a death signal (Pdeathsig) and its own process group: the kernel
// sends the signal when the thread that started the server ends, so that
// thread stays locked, waiting for the server, for as long as it runs.
func Launch(cmd *exec.Cmd, logPath string) (*Proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	return &Proc{Cmd: cmd, Done: done, log: logPath}, nil
}

// readyWithin bounds a server's start: generous, since it only bounds a
// failure and a machine under load may take long to start PostgreSQL.
const readyWithin = 2 * time.Minute

// WaitReady calls ready every 20 ms until it succeeds, the server exits,
// or readyWithin passes; the errors carry the server's log.
func (p *Proc) WaitReady(ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyWithin)
	defer cancel()
	name := filepath.Base(p.Cmd.Path)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.Done:
			b, _ := os.ReadFile(p.log)
			return fmt.Errorf("%s exited at start:\n%s", name, b)
		case <-ctx.Done():
			b, _ := os.ReadFile(p.log)
			return fmt.Errorf("%s did not answer in %s: %v\n%s", name, readyWithin, err, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop sends sig and waits for the server, killing its group after 10 s.
func (p *Proc) Stop(sig syscall.Signal) {
	if p == nil || p.Cmd.Process == nil {
		return
	}
	p.Cmd.Process.Signal(sig)
	select {
	case <-p.Done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.Done
	}
}

// OnFreePort calls run with free ports until it does not fail for a port
// taken meanwhile (three tries).
func OnFreePort(run func(port int) error) error {
	for attempt := 0; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		err = run(port)
		if err == nil || attempt == 2 || !strings.Contains(err.Error(), "already in use") {
			return err
		}
	}
}

// Main runs the tests, then stops the shared servers that were started
// (PostgreSQL, S3): call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit, for a TestMain with clean-up of its own:
// it runs the tests, stops the shared servers, and returns the exit code.
// First it lets the test binary be a conversion child it started
// (internal/convert/reexec.go): that child runs and Run returns 0.
func Run(m *testing.M) int {
	if reexec.Init() {
		return 0
	}
	code := m.Run()
	stopPG()
	stopS3()
	return code
}
