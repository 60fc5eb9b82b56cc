package cli_test

// End-to-end scenarios: the real reportctl binary against a real reportd on
// loopback, written as testscript files in testdata/script. Each script gets
// a fresh daemon (fresh data directory, so ids start at 1) and these
// commands besides the standard ones:
//
//	daemon stop | start [KEY=VALUE...]   stop or (re)start the script's daemon,
//	                                     with extra REPORTD_* environment
//	proxy MODE N                         a fault-injecting proxy in front of the
//	                                     daemon at $PROXY: the first N requests
//	                                     fail (drop|storage|validation|html503|hang)
//	proxyhits N                          the proxy saw exactly N requests
//	rc N PROG ARGS...                    run PROG, require exit status N
//	interrupt N PROG ARGS...             run PROG, send SIGINT once the proxy holds
//	                                     its request, require exit status N
//	proxybodies MIN                      every upload body the proxy failed was at
//	                                     least MIN bytes (retries never send empty)
//	mkpng FILE                           write a small PNG image
//	jsonget PATH WANT                    a value of the last stdout's JSON
//	                                     (PATH like .[0].id, .name, length)

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/sys/reexec"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testbin"
)

// bins are reportctl and reportd, built once per test process: the tests
// drive the same binaries users run.
var bins = testbin.NewLazy("reportctl-e2e-bin-", "reportctl", "reportd")

func TestMain(m *testing.M) {
	if reexec.Init() { // a conversion child (internal/convert/reexec.go)
		return
	}
	code := sitegen.Main(m)
	bins.Remove()
	os.Exit(code)
}

func TestScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binaries")
	}
	bin := bins.Dir(t)
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("REPO", repo)
			home := filepath.Join(env.WorkDir, ".home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			// Short waits keep failure paths quick; scripts that test
			// backoff set their own.
			env.Setenv("REPORTCTL_RETRY_WAIT", "20ms")
			env.Setenv("REPORTCTL_RETRY_MAX_WAIT", "200ms")
			d := &daemon{bin: filepath.Join(bin, "reportd"), dataDir: filepath.Join(env.WorkDir, ".reportd")}
			if err := d.start(nil); err != nil {
				return err
			}
			env.Defer(d.stop)
			env.Values[stateKey{}] = &scriptState{bin: bin, daemon: d}
			env.Setenv("SERVER", d.url())
			env.Setenv("REPORTCTL_SERVER", d.url())
			env.Setenv("DEAD", deadAddr())
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"daemon":      cmdDaemon,
			"proxy":       cmdProxy,
			"proxyhits":   cmdProxyHits,
			"rc":          cmdRC,
			"interrupt":   cmdInterrupt,
			"jsonget":     cmdJSONGet,
			"mkpng":       cmdMkPNG,
			"proxybodies": cmdProxyBodies,
			"stdoutenv":   cmdStdoutEnv,
		},
	})
}

type stateKey struct{}

// scriptState is one script's binaries, daemon and proxy.
type scriptState struct {
	bin    string // directory of reportctl and reportd
	daemon *daemon
	proxy  *faultProxy
}

func state(ts *testscript.TestScript) *scriptState { return ts.Value(stateKey{}).(*scriptState) }

// daemon is one reportd process; a restart keeps its address and data.
type daemon struct {
	bin, dataDir string
	addr         string // "" until the first start picks a free port
	proc         *testbin.Daemon
}

func (d *daemon) url() string { return "http://" + d.addr }

func (d *daemon) start(extra []string) error {
	// testbin's environment keeps the engines cold: most scripts convert nothing.
	env := append([]string{"REPORTD_LOG_LEVEL=warn"}, extra...)
	p, err := testbin.Start(d.bin, testbin.Options{Addr: d.addr, DataDir: d.dataDir, Env: env})
	if err != nil {
		return err
	}
	d.proc, d.addr = p, p.Addr
	return nil
}

func (d *daemon) stop() {
	if d.proc != nil {
		d.proc.Stop()
		d.proc = nil
	}
}

// cmdStdoutEnv sets an environment variable to the last command's stdout,
// trimmed (a token's secret, printed once).
func cmdStdoutEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stdoutenv NAME")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}

func cmdDaemon(ts *testscript.TestScript, neg bool, args []string) {
	d := state(ts).daemon
	if neg || len(args) == 0 {
		ts.Fatalf("usage: daemon stop | start [KEY=VALUE...]")
	}
	switch args[0] {
	case "stop":
		d.stop()
	case "start":
		d.stop()
		ts.Check(d.start(args[1:]))
	default:
		ts.Fatalf("usage: daemon stop | start [KEY=VALUE...]")
	}
}

// faultProxy fails the first n requests in the chosen way, then forwards
// to the daemon: a server that fails, then recovers.
type faultProxy struct {
	mode     string
	method   string // only requests with this method fail; "" for all
	failures int64
	failed   atomic.Int64
	mu       sync.Mutex
	bodies   []int64 // sizes of the bodies of failed requests that had one
	hits     atomic.Int64
	held     chan struct{} // receives when a "hang" request arrives
	srv      *httptest.Server
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request, next http.Handler) {
	p.hits.Add(1)
	if (p.method != "" && r.Method != p.method) || p.failed.Add(1) > p.failures {
		next.ServeHTTP(w, r)
		return
	}
	if r.ContentLength != 0 && r.Body != nil && p.mode != "drop" && p.mode != "hang" {
		n, _ := io.Copy(io.Discard, r.Body) // the whole body arrived, then the server failed
		p.mu.Lock()
		p.bodies = append(p.bodies, n)
		p.mu.Unlock()
	}
	switch p.mode {
	case "drop": // connection closed with no answer: a transport error
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case "storage", "validation":
		kind := map[string]string{"storage": "StorageError", "validation": "ValidationError"}[p.mode]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":"%s: injected by the test proxy","type":"%s"}`, kind, kind)
	case "html503": // a front proxy's error page, not the API's body
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "<html><body>503 Service Temporarily Unavailable</body></html>")
	case "hang":
		select {
		case p.held <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}
}

func cmdProxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: proxy MODE N [METHOD]")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	target, err := url.Parse(ts.Getenv("SERVER"))
	ts.Check(err)
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &faultProxy{mode: args[0], failures: n, held: make(chan struct{}, 1)}
	if len(args) == 3 {
		p.method = args[2]
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.ServeHTTP(w, r, rp) }))
	ts.Defer(p.srv.Close)
	state(ts).proxy = p
	ts.Setenv("PROXY", p.srv.URL)
}

func proxyOf(ts *testscript.TestScript) *faultProxy {
	p := state(ts).proxy
	if p == nil {
		ts.Fatalf("no proxy: run 'proxy MODE N' first")
	}
	return p
}

func cmdProxyHits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: proxyhits N")
	}
	want, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	if got := proxyOf(ts).hits.Load(); (got == want) == neg {
		ts.Fatalf("proxy saw %d requests, want %d", got, want)
	}
}

func cmdProxyBodies(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: proxybodies MIN")
	}
	min, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	p := proxyOf(ts)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bodies) == 0 {
		ts.Fatalf("the proxy failed no request with a body")
	}
	for i, n := range p.bodies {
		if n < min {
			ts.Fatalf("failed request %d carried %d body bytes, want at least %d", i+1, n, min)
		}
	}
}

func cmdMkPNG(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkpng FILE")
	}
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	ts.Check(png.Encode(&b, img))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

func cmdRC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: rc N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// scriptEnv is the environment a script's exec would get, for commands we
// must start ourselves.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "TMPDIR", "WORK",
		"REPORTCTL_SERVER", "REPORTCTL_TOKEN", "REPORTCTL_CONFIG", "REPORTCTL_RETRIES",
		"REPORTCTL_RETRY_WAIT", "REPORTCTL_RETRY_MAX_WAIT", "REPORTCTL_TIMEOUT", "REPORTCTL_CONNECT_TIMEOUT"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func cmdInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: interrupt N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	p := proxyOf(ts)
	path, err := exec.LookPath(filepath.Join(state(ts).bin, args[1]))
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Env, cmd.Dir = scriptEnv(ts), ts.Getenv("WORK")
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	ts.Check(cmd.Start())
	select { // the request is in flight, held by the proxy: now press Ctrl-C
	case <-p.held:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		ts.Fatalf("the command never reached the proxy")
	}
	ts.Check(cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	got := 0
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d (%v)", got, want, err)
	}
}

func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonget PATH WANT")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &v); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	got, err := jsonPath(v, args[0])
	ts.Check(err)
	s, ok := got.(string)
	if !ok {
		b, _ := json.Marshal(got)
		s = string(b)
	}
	if (s == args[1]) == neg {
		ts.Fatalf("%s = %s, want %s%s", args[0], s, map[bool]string{true: "not "}[neg], args[1])
	}
}

// jsonPath evaluates .key and [i] steps, and a final "length" (or ".length").
func jsonPath(v any, path string) (any, error) {
	rest, length := path, false
	if p, ok := strings.CutSuffix(rest, "length"); ok {
		rest, length = strings.TrimSuffix(p, "."), true
	}
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "["):
			end := strings.Index(rest, "]")
			if end < 0 {
				return nil, fmt.Errorf("bad path %q", path)
			}
			i, err := strconv.Atoi(rest[1:end])
			a, ok := v.([]any)
			if err != nil || !ok || i < 0 || i >= len(a) {
				return nil, fmt.Errorf("%s: no element %s", path, rest[:end+1])
			}
			v, rest = a[i], rest[end+1:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object before %q", path, rest)
			}
			val, present := m[rest[:end]]
			if !present {
				return nil, fmt.Errorf("%s: no field %q", path, rest[:end])
			}
			v, rest = val, rest[end:]
		default:
			return nil, fmt.Errorf("bad path %q", path)
		}
	}
	if !length {
		return v, nil
	}
	switch x := v.(type) {
	case []any:
		return float64(len(x)), nil
	case map[string]any:
		return float64(len(x)), nil
	}
	return nil, fmt.Errorf("%s: length of %T", path, v)
}

// deadAddr is a loopback URL nothing listens on.
func deadAddr() string {
	addr, err := testbin.FreeAddr()
	if err != nil {
		return "http://127.0.0.1:9"
	}
	return "http://" + addr
}
