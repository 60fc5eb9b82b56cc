package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testbin"
)

// reportctlIn runs the real reportctl in dir against server and returns
// its exit status, stdout and stderr.
func reportctlIn(t *testing.T, dir, server string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bins.Dir(t), "reportctl"), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, ".xdg"),
		"REPORTCTL_SERVER=" + server, "REPORTCTL_RETRIES=0"}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// fields reads `reportctl reports get`'s piped key<TAB>value lines.
func fields(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			m[k] = v
		}
	}
	return m
}

// TestGlobOverAllureSite does what the CI examples used to: a glob over
// build/reports/**/*.html with a real Allure 3 report in it. The glob gets
// a warning naming the folder (with --strict an error, exit 2, nothing
// stored), and so does c8's istanbul tree beside it, named by its top
// folder; a one-page report beside them does not. Uploading the folder as
// told gives a report whose detected figures `reports get` and the
// --summary table show, equal to what Allure's own results say.
func TestGlobOverAllureSite(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binaries and the generators")
	}
	allure := sitegen.Allure(t)
	gocover := sitegen.GoCoverOneFile(t)
	c8 := sitegen.C8(t)
	work := t.TempDir()
	reports := filepath.Join(work, "build", "reports")
	copyTree(t, allure.Dir, filepath.Join(reports, "allure-report"))
	copyTree(t, gocover.Dir, filepath.Join(reports, "go"))
	// istanbul writes an index.html in every folder of its tree: the
	// folder to upload is the tree's top.
	copyTree(t, c8.Dir, filepath.Join(reports, "coverage"))
	d := testbin.StartT(t, filepath.Join(bins.Dir(t), "reportd"), testbin.Options{DataDir: filepath.Join(work, "data"), Env: []string{"REPORTD_LOG_LEVEL=warn"}})
	srv := d.URL()
	siteDir := filepath.Join("build", "reports", "allure-report")

	code, _, stderr := reportctlIn(t, work, srv, "upload", "build/reports/**/*.html", "--project-name", "web", "--create-project", "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, "report site "+siteDir+" (allure)") ||
		!strings.Contains(stderr, "reportctl upload "+siteDir+")") {
		t.Errorf("no warning naming %s:\n%s", siteDir, stderr)
	}
	if strings.Contains(stderr, filepath.Join("build", "reports", "go")) {
		t.Errorf("a one-page report is named as a site:\n%s", stderr)
	}
	c8Dir := filepath.Join("build", "reports", "coverage")
	if !strings.Contains(stderr, "report site "+c8Dir+" (istanbul)") || strings.Count(stderr, "warning: ") != 2 {
		t.Errorf("want one warning for %s and one for %s:\n%s", siteDir, c8Dir, stderr)
	}

	code, stdout, stderr := reportctlIn(t, work, srv, "upload", "build/reports/**/*.html", "--project-name", "web", "--create-project", "--strict")
	if code != 2 || !strings.Contains(stderr, "--strict: ") || !strings.Contains(stderr, siteDir) {
		t.Fatalf("--strict: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if code, out, _ := reportctlIn(t, work, srv, "reports", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("--strict stored something: %s", out)
	}

	summary := filepath.Join(work, "summary.md")
	code, stdout, stderr = reportctlIn(t, work, srv, "upload", siteDir, "--project-name", "web", "--create-project", "--summary", summary)
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("folder upload: exit %d\n%s\n%s", code, stdout, stderr)
	}
	id := strings.Split(strings.TrimSpace(stdout), "\t")[1]
	code, stdout, stderr = reportctlIn(t, work, srv, "reports", "get", id)
	if code != 0 {
		t.Fatalf("reports get: %d %s", code, stderr)
	}
	got := fields(stdout)
	want := map[string]*int64{"passed": allure.Want.Passed, "failed": allure.Want.Failed, "skipped": allure.Want.Skipped, "flaky": allure.Want.Flaky}
	if got["generator"] != "allure" || got["coverage"] != "-" {
		t.Errorf("reports get: generator %q coverage %q", got["generator"], got["coverage"])
	}
	var parts []string
	for _, k := range []string{"passed", "failed", "skipped", "flaky"} {
		// sitegen knows the counts one run's results give (flaky needs
		// Allure's history); the others must be there all the same.
		if want[k] != nil && got[k] != strconv.FormatInt(*want[k], 10) {
			t.Errorf("reports get: %s = %q, want %d (Allure's results)", k, got[k], *want[k])
		}
		if got[k] != "-" {
			parts = append(parts, got[k]+" "+k)
		}
	}
	if len(parts) < 3 {
		t.Errorf("reports get shows too few figures: %q", got)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if row := "| allure: " + strings.Join(parts, ", ") + " |"; !strings.Contains(string(b), row) || !strings.Contains(string(b), "| Results |") {
		t.Errorf("--summary lacks the figures %q:\n%s", row, b)
	}
}

// copyTree copies a generated site (sitegen's must not be changed).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}
