package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testbin"
)

// TestWatchGroupsRunFolders: a CI job drops one report folder per run
// into a watched folder. `reportctl watch --sites --name e2e --branch main`
// (real fsnotify, real daemon) publishes each folder as a site named e2e
// on main, with the commit, build number and run URL of the GitHub
// Actions environment, as `upload` would; its log lines carry full
// timestamps.
func TestWatchGroupsRunFolders(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binaries")
	}
	work := t.TempDir()
	d := testbin.StartT(t, filepath.Join(bins.Dir(t), "reportd"), testbin.Options{DataDir: filepath.Join(work, "data"), Env: []string{"REPORTD_LOG_LEVEL=warn"}})
	if code, _, stderr := reportctlIn(t, work, d.URL(), "projects", "create", "--name", "web"); code != 0 {
		t.Fatalf("projects create: %s", stderr)
	}
	drop := filepath.Join(work, "out")
	if err := os.MkdirAll(drop, 0o755); err != nil {
		t.Fatal(err)
	}

	ci := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
		"GITHUB_REF_NAME": "feature/x", "GITHUB_RUN_NUMBER": "42", "GITHUB_RUN_ID": "9001",
		"GITHUB_SERVER_URL": "https://github.example.com", "GITHUB_REPOSITORY": "acme/web"}
	cmd := exec.Command(filepath.Join(bins.Dir(t), "reportctl"), "watch", drop, "--project", "1", "--sites", "--marker", ".done",
		"--name", "e2e", "--branch", "main", "--state", filepath.Join(work, "watch.db"))
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "XDG_CONFIG_HOME=" + filepath.Join(work, ".xdg"), "REPORTCTL_SERVER=" + d.URL()}
	for k, v := range ci {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut testbin.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}
	defer stop()

	type rep struct {
		ID       int64   `json:"id"`
		Name     string  `json:"name"`
		Kind     string  `json:"kind"`
		Branch   *string `json:"branch"`
		Commit   *string `json:"commit"`
		BuildID  *string `json:"buildId"`
		BuildURL *string `json:"buildUrl"`
	}
	list := func() []rep {
		code, stdout, stderr := reportctlIn(t, work, d.URL(), "reports", "list", "--json")
		if code != 0 {
			t.Fatalf("reports list: %s", stderr)
		}
		var rs []rep
		if err := json.Unmarshal([]byte(stdout), &rs); err != nil {
			t.Fatalf("reports list: %v\n%s", err, stdout)
		}
		return rs
	}
	waitReports := func(n int) []rep {
		deadline := time.Now().Add(90 * time.Second) // generous: a busy machine
		for {
			if rs := list(); len(rs) >= n {
				return rs
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %d reports after 90s; watch said:\n%s\n%s", n, out.String(), errOut.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i, run := range []string{"run-1", "run-2"} {
		dir := filepath.Join(drop, run)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{"index.html": "<!doctype html><title>" + run + "</title><script src=app.js></script>", "app.js": "document.title += '!'"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The marker last: the folder is finished.
		if err := os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitReports(i + 1)
	}
	stop()

	rs := list()
	if len(rs) != 2 {
		t.Fatalf("%d reports, want 2: %+v", len(rs), rs)
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, r := range rs {
		if r.Name != "e2e" || r.Kind != "site" || str(r.Branch) != "main" || str(r.Commit) != ci["GITHUB_SHA"] ||
			str(r.BuildID) != ci["GITHUB_RUN_NUMBER"] || str(r.BuildURL) != "https://github.example.com/acme/web/actions/runs/9001" {
			t.Errorf("report %d: name %q kind %q branch %s commit %s build %s %s; want e2e on main with GitHub's commit, number and URL",
				r.ID, r.Name, r.Kind, str(r.Branch), str(r.Commit), str(r.BuildID), str(r.BuildURL))
		}
	}
	log := out.String()
	if !strings.Contains(log, "name=e2e branch=main") || !strings.Contains(log, "(build metadata from GitHub Actions)") {
		t.Errorf("the start line does not show the metadata:\n%s", log)
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d) `)
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !stamp.MatchString(line) {
			t.Errorf("log line without a full timestamp: %q", line)
		}
	}
}
