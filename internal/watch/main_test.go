package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testbin"
)

// reportdBin and reportctlBin are the real binaries, built once for the
// end-to-end tests.
var reportdBin, reportctlBin string

// shared is one daemon for the tests that do not stop it; each test uses
// its own project so they can run in parallel.
var shared *testbin.Daemon

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := testbin.BuildTemp("watch-test-", "reportd", "reportctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	reportdBin = filepath.Join(dir, "reportd")
	reportctlBin = filepath.Join(dir, "reportctl")
	shared, err = testbin.Start(reportdBin, daemonOptions("", filepath.Join(dir, "shared-data")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer shared.Stop()
	return m.Run()
}

func daemonOptions(addr, dataDir string) testbin.Options {
	return testbin.Options{Addr: addr, DataDir: dataDir, Env: []string{"REPORTD_LOG_LEVEL=warn"}}
}

// startDaemon runs a daemon of the test's own, on addr ("" for a free
// port) so that the test can restart it there.
func startDaemon(t *testing.T, addr, dataDir string) *testbin.Daemon {
	t.Helper()
	return testbin.StartT(t, reportdBin, daemonOptions(addr, dataDir))
}

func newClient(t testing.TB, url string) report.Service {
	c, err := client.New(client.Options{Server: url, Retries: 1, RetryWait: 50 * time.Millisecond, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newProject(t *testing.T, svc report.Service) int64 {
	t.Helper()
	p, err := svc.CreateProject(context.Background(), report.ProjectCreate{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// events collects the watcher's --json output, one event per line.
type events struct {
	mu     sync.Mutex
	buf    []byte
	events []Event
}

func (e *events) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = append(e.buf, p...)
	for {
		i := bytes.IndexByte(e.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var ev Event
		if err := json.Unmarshal(e.buf[:i], &ev); err != nil {
			ev = Event{Event: "unparsed", Message: string(e.buf[:i])}
		}
		e.events = append(e.events, ev)
		e.buf = e.buf[i+1:]
	}
}

func (e *events) all() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.events...)
}

func (e *events) count(kind string) int {
	n := 0
	for _, ev := range e.all() {
		if ev.Event == kind {
			n++
		}
	}
	return n
}

// waitFor polls until cond holds, failing the test after a generous deadline.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEvent waits until the n-th event of kind has been logged.
func (e *events) waitEvent(t *testing.T, kind string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d %q event(s); log:\n%s", n, kind, e), 90*time.Second, func() bool { return e.count(kind) >= n })
}

func (e *events) String() string {
	var b strings.Builder
	for _, ev := range e.all() {
		b.WriteString(textLine(ev) + "\n")
	}
	return b.String()
}

// watchRun is one `reportctl watch` run in this process, with the real
// command wiring: a root command that owns --json, and the real client.
type watchRun struct {
	ev     *events
	cancel context.CancelFunc
	done   chan error
}

func rootWith(svcURL string, out io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "reportctl", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Bool("json", false, "")
	root.AddCommand(NewCommand(Deps{
		Client: func() (report.Service, error) {
			return client.New(client.Options{Server: svcURL, Retries: 1, RetryWait: 50 * time.Millisecond, Timeout: 30 * time.Second})
		},
		Stdout: out, Stderr: out,
	}))
	return root
}

func startWatch(t *testing.T, svcURL string, args ...string) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchRun{ev: &events{}, cancel: cancel, done: make(chan error, 1)}
	root := rootWith(svcURL, w.ev)
	root.SetArgs(append([]string{"watch", "--json"}, args...))
	go func() { w.done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() { w.stop(t) })
	return w
}

// stop cancels the run as SIGTERM would and waits for it to save its state.
func (w *watchRun) stop(t *testing.T) {
	t.Helper()
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.cancel = nil
	select {
	case err := <-w.done:
		if err != nil && err != context.Canceled {
			t.Errorf("watch returned %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("watch did not stop")
	}
}

// runOnce runs `reportctl watch --once` and returns its error and log.
func runOnce(t *testing.T, svcURL string, args ...string) (error, *events) {
	t.Helper()
	ev := &events{}
	root := rootWith(svcURL, ev)
	root.SetArgs(append([]string{"watch", "--once", "--json"}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return root.ExecuteContext(ctx), ev
}

// reports lists a project's reports by file name.
func reports(t *testing.T, svc report.Service, project int64) map[string][]report.Report {
	t.Helper()
	list, err := svc.ListReports(context.Background(), &project)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]report.Report{}
	for _, r := range list {
		out[r.FileName] = append(out[r.FileName], r)
	}
	return out
}

// download fetches a report's stored bytes through the API.
func download(t *testing.T, base string, id int64) []byte {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/api/reports/%d/download", base, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("download %d: %d %v", id, resp.StatusCode, err)
	}
	return b
}

// assertPublished checks that each named file was published exactly once,
// with exactly the given content, and that nothing else was.
func assertPublished(t *testing.T, d *testbin.Daemon, svc report.Service, project int64, want map[string][]byte) {
	t.Helper()
	got := reports(t, svc, project)
	for name, rs := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected report %q", name)
		} else if len(rs) != 1 {
			t.Errorf("%q published %d times", name, len(rs))
		}
	}
	for name, content := range want {
		rs := got[name]
		if len(rs) == 0 {
			t.Errorf("%q was not published", name)
			continue
		}
		if b := download(t, d.URL(), rs[0].ID); !bytes.Equal(b, content) {
			t.Errorf("%q: server has %d bytes, want the %d written", name, len(b), len(content))
		}
	}
}

func write(t *testing.T, path, content string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(content)
}
