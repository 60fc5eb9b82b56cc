package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testbin"
)

// TestUploadRidesOutDaemonRestart: with the default retry settings, an
// upload started while reportd is down succeeds once reportd is back on the
// same address, and says on stderr (only there) that it is waiting.
func TestUploadRidesOutDaemonRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binaries")
	}
	bin := bins.Dir(t)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	daemonOpts := testbin.Options{DataDir: data, Env: []string{"REPORTD_LOG_LEVEL=warn"}}
	d := testbin.StartT(t, filepath.Join(bin, "reportd"), daemonOpts)

	// Only the server is set: every retry setting is the default.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "XDG_CONFIG_HOME=" + filepath.Join(work, "xdg"),
		"REPORTCTL_SERVER=" + d.URL()}
	reportctl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, "reportctl"), args...)
		cmd.Env, cmd.Dir = env, work
		return cmd
	}
	if out, err := reportctl("projects", "create", "--name", "r").CombinedOutput(); err != nil {
		t.Fatalf("projects create: %v\n%s", err, out)
	}
	content := strings.Repeat("<p>restart</p>\n", 2000)
	if err := os.WriteFile(filepath.Join(work, "r.html"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}

	d.Stop()
	up := reportctl("upload", "r.html", "--project", "1", "--json")
	var stdout strings.Builder
	up.Stdout = &stdout
	stderrPipe, err := up.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	// Restart only once reportctl has been refused and said so.
	var stderr []string
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("reportctl ended before retrying: %v", up.Wait())
		}
		stderr = append(stderr, l)
	case <-time.After(2 * time.Minute): // a hang guard, not a timing check
		up.Process.Kill()
		t.Fatal("reportctl printed nothing while the daemon was down")
	}
	daemonOpts.Addr = d.Addr
	testbin.StartT(t, filepath.Join(bin, "reportd"), daemonOpts)

	for l := range lines {
		stderr = append(stderr, l)
	}
	if err := up.Wait(); err != nil {
		t.Fatalf("upload: %v\nstderr:\n%s", err, strings.Join(stderr, "\n"))
	}
	t.Logf("reportctl stderr:\n%s", strings.Join(stderr, "\n"))
	retry := regexp.MustCompile(`^retrying in [0-9.]+m?s \(attempt ([2-9])/9\): connection refused$`)
	for i, l := range stderr {
		m := retry.FindStringSubmatch(l)
		if m == nil || m[1] != string(rune('2'+i)) {
			t.Errorf("stderr line %d = %q, want a retry line for attempt %d/9", i+1, l, i+2)
		}
	}
	var res []struct {
		ID        int64  `json:"id"`
		LocalPath string `json:"localPath"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil || len(res) != 1 || res[0].ID != 1 {
		t.Fatalf("stdout is not the one uploaded report: %v\n%s", err, stdout.String())
	}
	got, err := reportctl("reports", "download", "1", "-o", "-").Output()
	if err != nil || string(got) != content {
		t.Fatalf("download after restart: %v (%d bytes, want %d)", err, len(got), len(content))
	}
}
