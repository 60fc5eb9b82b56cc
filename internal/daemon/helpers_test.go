package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/reexec"
	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testfixture"
	"github.com/reportd/reportd/internal/testserver"
)

// waitLong bounds every poll in these tests: generous, because a loaded
// 2-core CI machine is slow, and never asserted as a duration.
const waitLong = 60 * time.Second

// bins is cmd/reportd, built once per test run: the crash, signal and
// notify tests need the real process, not the package in-process.
var bins = testbin.NewLazy("reportd-bin-", "reportd")

// TestMain also stops the throwaway PostgreSQL of the storage: postgres
// tests, if one was started.
func TestMain(m *testing.M) {
	if reexec.Init() { // a conversion child (internal/convert/reexec.go)
		return
	}
	code := testserver.Run(m)
	bins.Remove()
	os.Exit(code)
}

// startReportd runs the reportd binary on 127.0.0.1:0 with dataDir, through
// testbin's launcher (clean environment, empty config); env adds variables.
// Engines stay cold unless a test asks (REPORTD_CONVERT_WARM_ON_START=true):
// 22 crash cycles must not start 22 Chromiums and LibreOffices.
func startReportd(t testing.TB, dataDir string, env ...string) *testbin.Daemon {
	t.Helper()
	return testbin.StartT(t, bins.Path(t, "reportd"), testbin.Options{DataDir: dataDir, Env: append([]string{"REPORTD_DASHBOARD=false"}, env...)})
}

// at is the URL of path on the daemon.
func at(d *testbin.Daemon, path string) string { return d.URL() + path }

// stopWith sends sig and waits for the process to exit.
func stopWith(t testing.TB, d *testbin.Daemon, sig syscall.Signal) error {
	t.Helper()
	d.Signal(sig)
	select {
	case <-d.Done():
	case <-time.After(waitLong):
		t.Fatalf("reportd did not exit after %v\n%s", sig, d.Log())
	}
	return d.Err()
}

// testConfig is the embedded defaults with dataDir, no dashboard, and a
// quiet logger; tests adjust the rest.
func testConfig(t testing.TB, dataDir string) config.Config {
	t.Helper()
	c := config.DefaultConfig()
	c.DataDir, c.Addr, c.Dashboard = dataDir, "127.0.0.1:0", false
	c.Content.Addr = "127.0.0.1:0"
	c.Convert.WarmOnStart = false // engines start on the first conversion, if any
	// A pool as deep as a burst (the default, convert/spares.go) would make
	// ~20 pages after every test's first conversion, for nothing.
	c.Convert.ChromiumSpares = 2
	c.StartupWait = 0 // a dependency that is down fails Open at once; tests of the wait set it
	return c
}

// startServer runs a Server in this process; the returned stop cancels it
// and closes it (idempotent).
func startServer(t testing.TB, c config.Config) (*Server, func()) {
	t.Helper()
	return startServerWith(t, &Server{Config: c})
}

// startServerWith is startServer for a Server set up by the caller (a logger).
func startServerWith(t testing.TB, s *Server) (*Server, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Open(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

// --- API helpers -----------------------------------------------------------

var httpClient = &http.Client{Timeout: waitLong}

type apiReport struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"projectId"`
	FileName  string `json:"fileName"`
	FileType  string `json:"fileType"`
	FilePath  string `json:"filePath"`
}

type apiProject struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	CoverImage      *string `json:"coverImage"`
	ReportCount     int64   `json:"reportCount"`
	TodayNewReports int64   `json:"todayNewReports"`
}

type apiError struct {
	Error string `json:"error"`
	Type  string `json:"type"`
}

func createProject(t testing.TB, base, name string) apiProject {
	t.Helper()
	resp, err := httpClient.Post(base+"/api/projects", "application/json", strings.NewReader(fmt.Sprintf(`{"name":%q}`, name)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p apiProject
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("create project: %s %s", resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// multipartUpload is the body of POST /api/reports.
func multipartUpload(project int64, fileType, name string, content []byte) (string, *bytes.Buffer) {
	return testfixture.UploadBody(project, fileType, name, content, nil)
}

// upload posts one report and returns the status and decoded body.
func upload(client *http.Client, base string, project int64, fileType, name string, content []byte) (int, apiReport, apiError, error) {
	ct, body := multipartUpload(project, fileType, name, content)
	resp, err := client.Post(base+"/api/reports", ct, body)
	if err != nil {
		return 0, apiReport{}, apiError{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, apiReport{}, apiError{}, err
	}
	var r apiReport
	var e apiError
	if resp.StatusCode == http.StatusCreated {
		err = json.Unmarshal(b, &r)
	} else {
		err = json.Unmarshal(b, &e)
	}
	return resp.StatusCode, r, e, err
}

func getBody(t testing.TB, url string) []byte {
	t.Helper()
	resp, err := httpClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return b
}

func getJSON(t testing.TB, url string, v any) {
	t.Helper()
	if err := json.Unmarshal(getBody(t, url), v); err != nil {
		t.Fatal(err)
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// markdown returns n bytes of valid, distinct Markdown.
func markdown(seed string, n int) []byte {
	line := "# " + seed + "\n\nSome text for " + seed + ".\n"
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(line)
	}
	return b.Bytes()[:n]
}

func waitAfter() <-chan time.Time { return time.After(waitLong) }

// adminAPI returns a caller of s's /admin API that sends the admin key of
// the serve file in dataDir; it answers the status and the body.
func adminAPI(t *testing.T, s *Server, dataDir string) func(method, path, body string) (int, []byte) {
	t.Helper()
	si, ok := readServeInfo(dataDir)
	if !ok || si.AdminKey == "" {
		t.Fatalf("serve file has no admin key: %+v", si)
	}
	return func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+s.Addr()+path, strings.NewReader(body))
		req.Header.Set(adminKeyHeader, si.AdminKey)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
}

// startSocketActivated starts the daemon as systemd socket activation
// does: n listening sockets on loopback passed as fds 3, 4, … with
// LISTEN_FDS=n and LISTEN_PID of the daemon. It returns the daemon and the
// sockets' addresses, in order.
func startSocketActivated(t *testing.T, n int) (*testbin.Daemon, []string) {
	t.Helper()
	var files []*os.File
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		ln.Close() // f keeps the socket open for the child
		t.Cleanup(func() { f.Close() })
		files = append(files, f)
	}
	// exec keeps the shell's pid, so $$ is the daemon's pid, as LISTEN_PID must be.
	p := testbin.StartT(t, bins.Path(t, "reportd"), testbin.Options{DataDir: t.TempDir(), Env: []string{"LISTEN_FDS=" + strconv.Itoa(n)},
		Command: func(bin string, args ...string) *exec.Cmd {
			cmd := exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin}, args...)...)
			cmd.ExtraFiles = files
			return cmd
		}})
	return p, addrs
}

// loadArgs loads the config as `reportd serve ARGS` would in environ.
func loadArgs(t *testing.T, environ []string, args ...string) (config.Config, error) {
	t.Helper()
	cmd := &cobra.Command{} // the flags of reportd serve
	config.Flags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return config.LoadEnv(cmd.Flags(), environ)
}
