package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/testbin"
)

// TestUploadRetryAfterLostResponseStoresOnce: a proxy in front of reportd
// lets reportd store the first upload and answer 201, then drops the
// connection instead of passing the answer on. reportctl retries with the
// same Idempotency-Key, gets the first answer, and exactly one report
// exists.
func TestUploadRetryAfterLostResponseStoresOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binaries")
	}
	bin := bins.Dir(t)
	work := t.TempDir()
	d := testbin.StartT(t, filepath.Join(bin, "reportd"), testbin.Options{DataDir: filepath.Join(work, "data"), Env: []string{"REPORTD_LOG_LEVEL=warn"}})

	target, err := url.Parse(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var (
		mu      sync.Mutex
		posts   int
		keys    []string
		dropped int // the status reportd gave the answer that was dropped
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/reports" {
			mu.Lock()
			posts++
			first := posts == 1
			keys = append(keys, r.Header.Get("Idempotency-Key"))
			mu.Unlock()
			if first {
				rec := httptest.NewRecorder()
				rp.ServeHTTP(rec, r) // reportd stores the report and answers
				mu.Lock()
				dropped = rec.Code
				mu.Unlock()
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close() // the answer is lost on the way back
				}
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "XDG_CONFIG_HOME=" + filepath.Join(work, "xdg"),
		"REPORTCTL_SERVER=" + proxy.URL, "REPORTCTL_RETRY_WAIT=100ms"}
	reportctl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, "reportctl"), args...)
		cmd.Env, cmd.Dir = env, work
		return cmd
	}
	if out, err := reportctl("projects", "create", "--name", "dup").CombinedOutput(); err != nil {
		t.Fatalf("projects create: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(work, "dup.md"), []byte("# dup\n\nonce only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	up := reportctl("upload", "dup.md", "--project", "1", "--json")
	var stdout, stderr strings.Builder
	up.Stdout, up.Stderr = &stdout, &stderr
	if err := up.Run(); err != nil {
		t.Fatalf("upload: %v\nstderr:\n%s", err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if dropped != http.StatusCreated || posts != 2 {
		t.Fatalf("the proxy saw %d uploads, dropped an answer of status %d; want 2 and 201\nstderr:\n%s", posts, dropped, stderr.String())
	}
	if keys[0] == "" || keys[0] != keys[1] {
		t.Errorf("Idempotency-Key of the attempts: %q, want one key reused", keys)
	}
	if !strings.Contains(stderr.String(), "retrying in") {
		t.Errorf("no retry announced on stderr:\n%s", stderr.String())
	}
	var res []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil || len(res) != 1 || res[0].ID != 1 {
		t.Fatalf("stdout is not the one report: %v\n%s", err, stdout.String())
	}
	resp, err := http.Get(d.URL() + "/api/reports")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var list []struct{ ID int64 }
	if err := json.Unmarshal(b, &list); err != nil || len(list) != 1 {
		t.Fatalf("reports on the server: %s, want exactly one", b)
	}
}
