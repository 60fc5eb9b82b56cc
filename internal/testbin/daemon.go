package testbin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Options says how to run `reportd serve`. It is the one way tests start
// the daemon binary.
type Options struct {
	// DataDir is the data directory (required). The daemon writes its
	// serve file, with the address it bound, there.
	DataDir string
	// Addr is host:port to serve on; "" is 127.0.0.1:0, the port the
	// kernel picks. Pass a previous Daemon's Addr to restart there.
	Addr string
	// Config is the config file; "" is an empty one, so a host's
	// /etc/reportd/reportd.yaml never applies.
	Config string
	// Env adds KEY=VALUE variables; a later one wins over an earlier or a
	// default one. Nothing else of this process's environment passes but
	// PATH, HOME and TMPDIR (see Env).
	Env []string
	// Args go after the flags Start passes, for example --dashboard=false.
	Args []string
	// Log also receives the daemon's stdout and stderr, which Daemon.Log
	// keeps in any case.
	Log io.Writer
	// Wait bounds the wait for the first answer to the health check; 0
	// means 60 s, generous for a loaded machine and never an assertion.
	Wait time.Duration
	// Command makes the process from the binary and its arguments; nil is
	// exec.Command. A test that passes a socket (ExtraFiles, LISTEN_PID)
	// wraps the binary here; the process it starts must become reportd.
	Command func(bin string, args ...string) *exec.Cmd
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

// errExited marks a daemon that ended before answering.
var errExited = errors.New("reportd exited before answering")

// Env is a daemon's environment: PATH, HOME and TMPDIR of this process,
// engines that start on the first conversion rather than at start-up,
// then extra (KEY=VALUE; later entries win, as in exec.Cmd.Env).
func Env(extra ...string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// The content origin on a port of its own for each daemon, as the API.
	return append(append(env, "REPORTD_CONVERT_WARM_ON_START=false", "REPORTD_CONTENT_ADDR=127.0.0.1:0"), extra...)
}

// Command is bin with args in the daemons' clean environment (Env), for
// the subcommands that are not serve (version, backup, token, check...).
func Command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = Env()
	return cmd
}

// EmptyConfig is the config file Start passes when Options.Config is "".
const EmptyConfig = os.DevNull

// FreeAddr is a loopback host:port that was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start runs `bin serve --config C --addr A --data-dir D [Args]`, finds
// the address in the serve file the daemon writes once it has bound it,
// and returns once GET /api/reports/ping answers 200. On error the
// process is gone.
func Start(bin string, o Options) (*Daemon, error) {
	if o.DataDir == "" {
		return nil, errors.New("testbin: Options.DataDir is required")
	}
	addr, config, command := o.Addr, o.Config, o.Command
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if config == "" {
		config = EmptyConfig
	}
	if command == nil {
		command = exec.Command
	}
	d := &Daemon{DataDir: o.DataDir, done: make(chan struct{})}
	args := append([]string{"serve", "--config", config, "--addr", addr, "--data-dir", o.DataDir}, o.Args...)
	d.Cmd = command(bin, args...)
	d.Cmd.Env = Env(o.Env...)
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
	// Everything in flight ends when the process does.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	go func() {
		select {
		case <-d.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := d.waitReady(ctx); err != nil {
		select {
		case <-d.done:
			return nil, fmt.Errorf("%w (serve --addr %s): %v\n%s", errExited, addr, d.err, d.Log())
		default:
		}
		d.Kill()
		return nil, fmt.Errorf("reportd did not answer within %v: %v\n%s", wait, err, d.Log())
	}
	return d, nil
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

// waitReady reads the serve file this process wrote (a stale one, left by
// a daemon that was killed, names another pid), then pings.
func (d *Daemon) waitReady(ctx context.Context) error {
	for d.Addr == "" {
		if a, ok := serveAddr(d.DataDir, d.Cmd.Process.Pid); ok {
			d.Addr = a
			break
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("no serve file: %w", err)
		}
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.URL()+"/api/reports/ping", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("ping %s: %w", d.Addr, err)
		}
	}
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Millisecond):
		return nil
	}
}

// serveAddr is the host:port in <dataDir>/reportd.serve.json if process
// pid wrote it.
func serveAddr(dataDir string, pid int) (string, bool) {
	var si struct {
		PID int    `json:"pid"`
		URL string `json:"url"`
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "reportd.serve.json"))
	if err != nil || json.Unmarshal(b, &si) != nil || si.PID != pid || si.URL == "" {
		return "", false
	}
	return strings.TrimPrefix(si.URL, "http://"), true
}

// URL is the daemon's base URL, http://host:port.
func (d *Daemon) URL() string { return "http://" + d.Addr }

// Log is everything the daemon wrote to stdout and stderr so far.
func (d *Daemon) Log() string { return d.log.String() }

// Done is closed once the process has exited; Err then says how.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err waits for the process to exit and returns its exit status.
func (d *Daemon) Err() error { <-d.done; return d.err }

// Signal sends sig without waiting.
func (d *Daemon) Signal(sig os.Signal) { _ = d.Cmd.Process.Signal(sig) }

// Stop asks the daemon to shut down (SIGTERM) and waits for it; after 30 s
// it kills it. Stopping a stopped daemon does nothing.
func (d *Daemon) Stop() {
	select {
	case <-d.done:
		return
	default:
	}
	d.Signal(syscall.SIGTERM)
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
