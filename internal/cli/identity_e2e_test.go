package cli_test

// A team's first week, as the team did it: the real reportctl and reportd
// binaries over loopback. A report's identity is its name and file type,
// and names come from folders where the file name says nothing.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testfixture"
)

// cliEnv is one daemon and the reportctl that talks to it.
type cliEnv struct {
	t      *testing.T
	bin    string
	server string
	dir    string // the working directory reportctl runs in
}

func startCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binaries")
	}
	bin := bins.Dir(t)
	d, err := testbin.Start(filepath.Join(bin, "reportd"), testbin.Options{DataDir: t.TempDir(), Env: []string{"REPORTD_LOG_LEVEL=warn"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return &cliEnv{t: t, bin: bin, server: "http://" + d.Addr, dir: t.TempDir()}
}

// run runs reportctl with args and returns its stdout; a failure fails
// the test with its stderr.
func (e *cliEnv) run(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.bin, "reportctl"), args...)
	cmd.Dir = e.dir
	home := filepath.Join(e.dir, ".home")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"REPORTCTL_SERVER=" + e.server, "REPORTCTL_NO_CI_METADATA=1"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("reportctl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// runJSON runs reportctl with --json and decodes its output into v.
func (e *cliEnv) runJSON(v any, args ...string) {
	e.t.Helper()
	out := e.run(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("reportctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// uploaded is one line of upload --json.
type uploaded struct {
	report.Report
	LatestURL string `json:"latestUrl"`
}

func (e *cliEnv) upload(args ...string) []uploaded {
	e.t.Helper()
	var out []uploaded
	e.runJSON(&out, append([]string{"upload"}, args...)...)
	return out
}

func (e *cliEnv) write(name string, data []byte) {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// follow GETs a stable link without following it: the report id it
// sends to, or the status when it does not redirect.
func follow(t *testing.T, u string) (id string, status int) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.Header.Get("X-Report-Id"), res.StatusCode
}

// TestDeckPPTXAndPDFKeepBoth: deck.pptx and deck.pdf are both named
// "deck" but are two reports; `prune --keep-last 1` lists what goes (with
// names, types and dates) and keeps the newest of each; the latest links
// upload prints name the project by its slug and the report by name and
// type.
func TestDeckPPTXAndPDFKeepBoth(t *testing.T) {
	e := startCLIEnv(t)
	e.write("deck.pptx", testfixture.FakePPTX())
	e.write("deck.pdf", testfixture.MinimalPDF())
	e.run("projects", "create", "--name", "acme/api")
	first := e.upload("deck.pptx", "deck.pdf", "--project-name", "acme/api", "-j", "1")
	if len(first) != 2 || first[0].Name != "deck" || first[1].Name != "deck" {
		t.Fatalf("uploads: %+v", first)
	}
	for _, u := range first {
		want := "/p/acme-api/latest/deck?type=" + string(u.FileType)
		if !strings.HasSuffix(u.LatestURL, want) {
			t.Errorf("%s: latestUrl %q, want …%s", u.FileName, u.LatestURL, want)
		}
		if id, status := follow(t, u.LatestURL); status != http.StatusFound || id != itoa(u.ID) {
			t.Errorf("%s leads to report %q (%d), want %d", u.LatestURL, id, status, u.ID)
		}
	}

	// keep-last 1: each of deck.pptx and deck.pdf is the only one of its
	// name and type, so nothing goes.
	var res report.PruneResult
	e.runJSON(&res, "prune", "--project", "acme-api", "--keep-last", "1", "--yes")
	if len(res.Reports) != 0 {
		t.Fatalf("prune of one pptx and one pdf removed %+v", res.Reports)
	}
	var left []report.Report
	e.runJSON(&left, "reports", "list", "--project", "1")
	if len(left) != 2 {
		t.Fatalf("after the prune: %d reports, want both", len(left))
	}

	// A second PDF: the dry run lists the older PDF (name, type, date) and
	// changes nothing; --yes removes exactly it.
	second := e.upload("deck.pdf", "--project-name", "acme-api")
	out := e.run("prune", "--project", "acme/api", "--keep-last", "1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], itoa(first[1].ID)+"\t") || !strings.Contains(lines[0], "\tdeck\tpdf\t") ||
		!strings.Contains(lines[0], first[1].UploadTime.String()) {
		t.Errorf("dry run lists %q, want report %d (deck, pdf, %s)", lines, first[1].ID, first[1].UploadTime)
	}
	e.runJSON(&left, "reports", "list", "--project", "1")
	if len(left) != 3 {
		t.Fatalf("the dry run removed something: %d reports", len(left))
	}
	e.runJSON(&res, "prune", "--project", "acme/api", "--keep-last", "1", "--yes")
	if len(res.Reports) != 1 || res.Reports[0].ID != first[1].ID || res.Reports[0].FileType != report.PDF {
		t.Fatalf("prune removed %+v, want only report %d (the older pdf)", res.Reports, first[1].ID)
	}
	e.runJSON(&left, "reports", "list", "--project", "1")
	if len(left) != 2 || left[0].ID != first[0].ID || left[1].ID != second[0].ID {
		t.Fatalf("left %+v, want the pptx %d and the newer pdf %d", left, first[0].ID, second[0].ID)
	}
}

// TestAllureAndCoveragePyNeverMix: Allure 3's and coverage.py's reports
// (real generator output) both open on index.html. Uploaded into one
// project, as single pages and as folders, they get their folders' names
// (allure-report, htmlcov), never a shared "index": latest links, badges
// and retention keep them apart, and a folder's report is titled with the
// folder's name, not a made-up zip name.
func TestAllureAndCoveragePyNeverMix(t *testing.T) {
	allure, cov := sitegen.Allure(t), sitegen.CoveragePy(t)
	e := startCLIEnv(t)
	e.run("projects", "create", "--name", "acme/api")
	pages := e.upload(filepath.Join(allure.Dir, "index.html"), filepath.Join(cov.Dir, "index.html"), "--project-name", "acme/api", "-j", "1")
	if len(pages) != 2 || pages[0].Name != "allure-report" || pages[1].Name != "htmlcov" || pages[0].FileName != "index.html" {
		t.Fatalf("single pages named %q and %q (files %q, %q), want allure-report and htmlcov",
			pages[0].Name, pages[1].Name, pages[0].FileName, pages[1].FileName)
	}
	sites := e.upload(allure.Dir, cov.Dir, "--project-name", "acme/api", "-j", "1")
	for i, want := range []string{"allure-report", "htmlcov"} {
		s := sites[i]
		if s.Kind != report.KindSite || s.Name != want || s.FileName != want {
			t.Fatalf("folder %s: kind %s, name %q, file name %q; want a site named and titled %s", want, s.Kind, s.Name, s.FileName, want)
		}
	}
	// Each name's latest link and badge: its own generator's newest.
	base := e.server + "/p/acme-api"
	for i, name := range []string{"allure-report", "htmlcov"} {
		if id, status := follow(t, base+"/latest/"+name+"?type=html"); status != http.StatusFound || id != itoa(sites[i].ID) {
			t.Errorf("latest %s: report %q (%d), want %d", name, id, status, sites[i].ID)
		}
	}
	badge := func(name string) string {
		t.Helper()
		res, err := http.Get(base + "/" + name + "/badge.json")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b struct{ Label, Message string }
		if err := json.NewDecoder(res.Body).Decode(&b); err != nil || res.StatusCode != 200 {
			t.Fatalf("badge of %s: %d %v", name, res.StatusCode, err)
		}
		return b.Label + ": " + b.Message
	}
	if got := badge("htmlcov"); !strings.HasPrefix(got, "coverage: ") {
		t.Errorf("htmlcov's badge %q, want its coverage", got)
	}
	if got := badge("allure-report"); !strings.HasPrefix(got, "tests: ") {
		t.Errorf("allure-report's badge %q, want its test counts", got)
	}
	// Retention: keep-last 1 takes each generator's older report (the
	// single page), never the other generator's.
	var res report.PruneResult
	e.runJSON(&res, "prune", "--project", "acme-api", "--keep-last", "1", "--yes")
	if len(res.Reports) != 2 || res.Reports[0].ID != pages[0].ID || res.Reports[1].ID != pages[1].ID {
		t.Fatalf("prune removed %+v, want the two single pages %d and %d", res.Reports, pages[0].ID, pages[1].ID)
	}
	var left []report.Report
	e.runJSON(&left, "reports", "list", "--project", "1")
	if len(left) != 2 || left[0].Name != "allure-report" || left[1].Name != "htmlcov" {
		t.Fatalf("after the prune: %+v", left)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
