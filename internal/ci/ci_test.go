package ci_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testbin"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// clientsDir is a clients.dir holding this machine's reportctl, built
// once per test binary, as scripts/run.sh lays it out.
func clientsDir(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() { binDir, buildErr = testbin.BuildTemp("reportd-ci-", "reportctl") })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	name := "reportctl-" + runtime.GOOS + "-" + runtime.GOARCH
	data, err := os.ReadFile(filepath.Join(binDir, "reportctl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(hex.EncodeToString(sum[:])+"  "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startServer runs reportd serving reportctl; with a token, reads need it too.
func startServer(t *testing.T, token string) *apitest.Env {
	dir := clientsDir(t)
	return apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.Clients.Dir = dir
		if token != "" {
			c.Auth.Token, c.Auth.Reads = token, true
		}
	}})
}

// workspace is a checkout after the tests ran: a coverage.py-like site
// folder and a Markdown file.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range map[string]string{
		"htmlcov/index.html":    "<!doctype html><title>Coverage</title><link rel=stylesheet href=style.css><h1>Coverage 87%</h1>",
		"htmlcov/style.css":     "h1 { color: green }",
		"docs/release-notes.md": "# Release notes\n\nAll green.\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// baseEnv is the environment of a runner: PATH and HOME, nothing of the
// developer's reportctl configuration.
func baseEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
}

// runScript runs script with shell args in dir and env; its output goes
// to the test log.
func runScript(t *testing.T, dir string, env []string, script string, shell ...string) error {
	t.Helper()
	f := filepath.Join(t.TempDir(), "step.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell[0], append(shell[1:], f)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", shell[0], out)
	return err
}

// reportsOf lists project's reports over the API.
func reportsOf(t *testing.T, e *apitest.Env, token string, project int64) []report.Report {
	t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/reports?projectId=%d", e.URL, project), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r := e.Send(req)
	if r.StatusCode != 200 {
		t.Fatalf("list reports: %d %s", r.StatusCode, r.Body)
	}
	var out []report.Report
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkPublished asserts the two reports of workspace with their CI metadata.
func checkPublished(t *testing.T, reps []report.Report, ids, branch, commit, buildURL string) {
	t.Helper()
	if len(reps) != 2 {
		t.Fatalf("want 2 reports, got %d: %+v", len(reps), reps)
	}
	var got []string
	for _, r := range reps {
		got = append(got, fmt.Sprint(r.ID))
		if r.Branch == nil || *r.Branch != branch || r.Commit == nil || *r.Commit != commit || r.BuildURL == nil || *r.BuildURL != buildURL {
			t.Errorf("report %d metadata: branch %v commit %v build %v; want %s %s %s", r.ID, deref(r.Branch), deref(r.Commit), deref(r.BuildURL), branch, commit, buildURL)
		}
		switch r.FileType {
		case report.HTML:
			if !r.IsSite() || r.Files != 2 {
				t.Errorf("htmlcov must be one site of 2 files: %+v", r)
			}
		case report.MD:
			if r.FileName != "release-notes.md" {
				t.Errorf("markdown report: %+v", r)
			}
		default:
			t.Errorf("unexpected report %+v", r)
		}
	}
	// The output lists them in the order of the paths given, uploads run in parallel.
	want := strings.Split(ids, ",")
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("report ids output %q, reports %v", ids, got)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// readKV reads KEY=VALUE lines (GITHUB_OUTPUT, a dotenv report).
func readKV(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(bytes.TrimSpace(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv
}
