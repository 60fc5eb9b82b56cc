package daemon

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testbin"
)

// waitLong bounds every poll in these tests: generous, because a loaded
// 2-core CI machine is slow, and never asserted as a duration.
const waitLong = 60 * time.Second

// bins is cmd/reportd, built once per test run: the crash, signal and
// notify tests need the real process, not the package in-process.
var bins = testbin.NewLazy("reportd-bin-", "reportd")

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

// proc is one reportd process started by a test.
type proc struct {
	cmd  *exec.Cmd
	addr string // host:port it serves on
	done chan struct{}
	err  error // Wait's result, after done
	logs *testbin.Buffer
}

func (p *proc) url(path string) string { return "http://" + p.addr + path }

// startReportd runs `reportd serve` on 127.0.0.1:0 with dataDir and waits
// until it logs its address. env adds variables (KEY=VALUE).
func startReportd(t testing.TB, dataDir string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(bins.Path(t, "reportd"), "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
	return startCmd(t, cmd, env...)
}

func startCmd(t testing.TB, cmd *exec.Cmd, env ...string) *proc {
	t.Helper()
	// Engines stay cold unless a test asks (REPORTD_CONVERT_WARM_ON_START=true):
	// 22 crash cycles must not start 22 Chromiums and LibreOffices.
	cmd.Env = append(cleanEnv(), append([]string{"REPORTD_LOG_FORMAT=json", "REPORTD_DASHBOARD=false", "REPORTD_CONVERT_WARM_ON_START=false"}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), logs: &testbin.Buffer{}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			p.logs.Write(append(line, '\n'))
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "reportd serving" {
				select {
				case addrc <- rec.Addr:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.addr = <-addrc:
	case <-p.done:
		t.Fatalf("reportd exited before serving: %v\n%s", p.err, p.logs.String())
	case <-time.After(waitLong):
		t.Fatalf("reportd did not start serving\n%s", p.logs.String())
	}
	return p
}

// cleanEnv is the test's environment without REPORTD_* and systemd
// variables, so the developer's settings cannot leak into the daemon.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "REPORTD_") || strings.HasPrefix(kv, "NOTIFY_SOCKET=") ||
			strings.HasPrefix(kv, "LISTEN_") || strings.HasPrefix(kv, "WATCHDOG_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stop sends sig and waits for the process to exit.
func (p *proc) stop(t testing.TB, sig syscall.Signal) error {
	t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(waitLong):
		t.Fatalf("reportd did not exit after %v\n%s", sig, p.logs.String())
	}
	return p.err
}

// testConfig is the embedded defaults with dataDir, no dashboard, and a
// quiet logger; tests adjust the rest.
func testConfig(t testing.TB, dataDir string) Config {
	t.Helper()
	c := DefaultConfig()
	c.DataDir, c.Addr, c.Dashboard = dataDir, "127.0.0.1:0", false
	c.Convert.WarmOnStart = false // engines start on the first conversion, if any
	return c
}

// startServer runs a Server in this process; the returned stop cancels it
// and closes it (idempotent).
func startServer(t testing.TB, c Config) (*Server, func()) {
	t.Helper()
	s := &Server{Config: c}
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
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("projectId", fmt.Sprint(project))
	mw.WriteField("fileType", fileType)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	return mw.FormDataContentType(), &buf
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
