package testbin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Options says how to run `reportd serve`.
type Options struct {
	// Addr is host:port to serve on; "" picks a free loopback port, and
	// picks again if another process takes it before reportd binds it.
	// Pass a previous Daemon's Addr to restart on the same address.
	Addr    string
	DataDir string
	// Args go between "serve" and --addr, for example --config FILE.
	Args []string
	// Env is the daemon's whole environment (exec.Cmd.Env): nil inherits
	// this process's.
	Env []string
	// Log also receives the daemon's stdout and stderr, which Daemon.Log
	// keeps in any case.
	Log io.Writer
	// Wait bounds the wait for the first answer to the health check; 0
	// means 60 s, generous for a loaded machine and never an assertion.
	Wait time.Duration
}

// Daemon is one running reportd.
type Daemon struct {
	Addr    string // host:port it serves on
	DataDir string
	Cmd     *exec.Cmd
	log     Buffer
	done    chan struct{}
	err     error // Wait's result, once done is closed
}

// errExited marks a daemon that ended before answering; with a port it
// picked itself, Start then tries another.
var errExited = errors.New("reportd exited before answering")

// FreeAddr is a loopback host:port that was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start runs `bin serve [Args] --addr ADDR --data-dir DataDir` and returns
// once GET /api/reports/ping answers 200. On error the process is gone.
func Start(bin string, o Options) (*Daemon, error) {
	if o.Addr != "" {
		return start(bin, o)
	}
	var err error
	for range 5 {
		if o.Addr, err = FreeAddr(); err != nil {
			return nil, err
		}
		var d *Daemon
		if d, err = start(bin, o); !errors.Is(err, errExited) {
			return d, err
		}
		o.Addr = ""
	}
	return nil, err
}

// StartT is Start for a test: it fails t on error, stops the daemon when
// the test ends, and logs its output if the test failed.
func StartT(t testing.TB, bin string, o Options) *Daemon {
	t.Helper()
	d, err := Start(bin, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Stop()
		if t.Failed() {
			t.Logf("reportd log:\n%s", d.Log())
		}
	})
	return d
}

func start(bin string, o Options) (*Daemon, error) {
	d := &Daemon{Addr: o.Addr, DataDir: o.DataDir, done: make(chan struct{})}
	args := append(append([]string{"serve"}, o.Args...), "--addr", o.Addr, "--data-dir", o.DataDir)
	d.Cmd = exec.Command(bin, args...)
	d.Cmd.Env = o.Env
	var out io.Writer = &d.log
	if o.Log != nil {
		out = io.MultiWriter(&d.log, o.Log)
	}
	d.Cmd.Stdout, d.Cmd.Stderr = out, out
	if err := d.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.err = d.Cmd.Wait(); close(d.done) }()
	wait := o.Wait
	if wait == 0 {
		wait = 60 * time.Second
	}
	// A ping in flight ends when the process does: another program holding
	// the port may accept and never answer.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	go func() {
		select {
		case <-d.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.URL()+"/api/reports/ping", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-d.done:
		return nil, fmt.Errorf("%w on %s: %v\n%s", errExited, o.Addr, d.err, d.Log())
	default:
	}
	d.Kill()
	return nil, fmt.Errorf("reportd did not answer on %s within %v:\n%s", o.Addr, wait, d.Log())
}

// URL is the daemon's base URL, http://host:port.
func (d *Daemon) URL() string { return "http://" + d.Addr }

// Log is everything the daemon wrote to stdout and stderr so far.
func (d *Daemon) Log() string { return d.log.String() }

// Done is closed once the process has exited; Err then says how.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err is the process's exit status, once Done is closed.
func (d *Daemon) Err() error { <-d.done; return d.err }

// Stop asks the daemon to shut down (SIGTERM) and waits for it; after 30 s
// it kills it. Stopping a stopped daemon does nothing.
func (d *Daemon) Stop() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.Kill()
	}
}

// Kill ends the daemon with SIGKILL, as a crash would, and waits for it.
func (d *Daemon) Kill() {
	_ = d.Cmd.Process.Kill()
	<-d.done
}
