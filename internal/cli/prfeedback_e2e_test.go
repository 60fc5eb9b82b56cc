package cli_test

// Pull-request feedback and quality gates: the real reportctl and reportd
// over loopback, the forge a fake GitHub or GitLab API on 127.0.0.1
// (prfeedback/forgetest), the reports made by the real generators.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/prfeedback/forgetest"
	"github.com/reportd/reportd/internal/sitegen"
)

// feedbackResult is the part of upload --json this test reads.
type feedbackResult struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"projectId"`
	Name      string `json:"name"`
	Gates     []prfeedback.GateResult
	Feedback  *prfeedback.Outcome
}

// runCI runs reportctl upload ... --json in a CI environment env and
// requires exit status code.
func (e *cliEnv) runCI(env map[string]string, code int, args ...string) ([]feedbackResult, string) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.bin, "reportctl"), append(args, "--json")...)
	cmd.Dir = e.dir
	home := filepath.Join(e.dir, ".home")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"REPORTCTL_SERVER=" + e.server, "REPORTCTL_RETRY_WAIT=20ms", "REPORTCTL_RETRY_MAX_WAIT=200ms"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	got := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		got = xe.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	if got != code {
		e.t.Fatalf("reportctl %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, out.String(), errb.String())
	}
	var res []feedbackResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		e.t.Fatalf("reportctl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return res, errb.String()
}

func githubEnv(api, summary string) map[string]string {
	return map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_API_URL": api, "GITHUB_REPOSITORY": "org/app", "GITHUB_TOKEN": "ghs_test",
		"GITHUB_REF": "refs/pull/7/merge", "GITHUB_HEAD_REF": "feature", "GITHUB_BASE_REF": "main",
		"GITHUB_SHA": "5f3c2d1e0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e", "GITHUB_STEP_SUMMARY": summary,
	}
}

func ourComments(srv *forgetest.Server, projectID int64, name string) []forgetest.Comment {
	var out []forgetest.Comment
	for _, c := range srv.Comments() {
		if strings.Contains(c.Body, prfeedback.Marker(projectID, name)) {
			out = append(out, c)
		}
	}
	return out
}

func TestUploadCommentGitHub(t *testing.T) {
	e := startCLIEnv(t)
	cov := sitegen.CoveragePy(t)
	gh := forgetest.GitHub(t, "ghs_test")
	gh.AddComment("org/app", 7, "LGTM")
	summary := filepath.Join(e.dir, "step-summary.md")
	env := githubEnv(gh.URL, summary)

	// The base branch's build, as a push to main publishes it.
	mainRes, _ := e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--create-project", "--name", "coverage", "--branch", "main")

	// First upload posts, the second edits the same comment.
	res, _ := e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--comment", "--status")
	if len(res) != 1 || res[0].Feedback == nil || res[0].Feedback.Comment != "created" || res[0].Feedback.Status != "success" {
		t.Fatalf("first upload: %+v", res)
	}
	first := res[0]
	res, _ = e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--comment")
	if res[0].Feedback.Comment != "updated" || res[0].Feedback.CommentID != first.Feedback.CommentID {
		t.Fatalf("second upload: %+v (first %+v)", res[0].Feedback, first.Feedback)
	}
	ours := ourComments(gh, first.ProjectID, "coverage")
	if len(gh.Comments()) != 2 || len(ours) != 1 {
		t.Fatalf("comments %+v", gh.Comments())
	}
	want := fmt.Sprintf("/#/reports/%d", res[0].ID) // the edit names the newer report
	if !strings.Contains(ours[0].Body, want) || !strings.Contains(ours[0].Body, strings.TrimSuffix(fmt.Sprint(*cov.Want.Lines), ".0")) {
		t.Errorf("comment lacks %s or the coverage figure %v:\n%s", want, *cov.Want.Lines, ours[0].Body)
	}
	// Compared with main's build: the same figure, no change.
	for _, want := range []string{fmt.Sprintf("compared with [report %d](", mainRes[0].ID), "on `main`", "| Coverage |", "±0 pp"} {
		if !strings.Contains(ours[0].Body, want) {
			t.Errorf("comment lacks %q:\n%s", want, ours[0].Body)
		}
	}
	if st := gh.Statuses(); len(st) != 1 || st[0].Context != "reportd/coverage" || st[0].State != "success" || !strings.Contains(st[0].TargetURL, "/#/reports/") {
		t.Errorf("statuses %+v", st)
	}

	// A gate above the real figure: published, then exit 7; the comment
	// and the status say so.
	above := fmt.Sprintf("coverage=%g", *cov.Want.Lines+1)
	res, stderr := e.runCI(env, 7, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--comment", "--status", "--fail-under", above, "--summary", summary)
	if res[0].ID == 0 || len(res[0].Gates) != 1 || res[0].Gates[0].Passed || !strings.Contains(stderr, "quality gate failed") {
		t.Fatalf("gate: %+v\n%s", res, stderr)
	}
	ours = ourComments(gh, first.ProjectID, "coverage")
	if len(ours) != 1 || !strings.Contains(ours[0].Body, "❌") {
		t.Errorf("comment after a failed gate:\n%+v", ours)
	}
	if st := gh.Statuses(); st[len(st)-1].State != "failure" {
		t.Errorf("status after a failed gate: %+v", st)
	}
	if data, _ := os.ReadFile(summary); !strings.Contains(string(data), "**Quality gates**") || !strings.Contains(string(data), "❌") {
		t.Errorf("step summary:\n%s", data)
	}
	below := fmt.Sprintf("coverage=%g", *cov.Want.Lines-1)
	if res, _ := e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--fail-under", below); !res[0].Gates[0].Passed {
		t.Errorf("gate below the figure: %+v", res[0].Gates)
	}
	// A test gate with only a coverage report: nothing to check is a failure.
	if _, stderr := e.runCI(env, 7, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--fail-on", "failures"); !strings.Contains(stderr, "no uploaded report has test results") {
		t.Errorf("unchecked gate: %s", stderr)
	}
}

// The forge failing does not fail the upload unless --comment=required;
// 5xx answers are retried first, then reported.
func TestUploadCommentForgeDown(t *testing.T) {
	e := startCLIEnv(t)
	cov := sitegen.CoveragePy(t)
	gh := forgetest.GitHub(t, "ghs_test")
	env := githubEnv(gh.URL, filepath.Join(e.dir, "summary.md"))
	gh.Fail(forgetest.ServerError, 1000, "")
	res, stderr := e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--create-project", "--name", "coverage", "--comment")
	if res[0].ID == 0 || !strings.Contains(stderr, "502") {
		t.Fatalf("forge down: %+v\n%s", res, stderr)
	}
	if n := len(gh.Requests()); n != 1+prfeedback.DefaultRetry.Retries {
		t.Errorf("%d requests, want %d: %v", n, 1+prfeedback.DefaultRetry.Retries, gh.Requests())
	}
	_, stderr = e.runCI(env, 1, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--comment=required")
	if !strings.Contains(stderr, "--comment=required") {
		t.Errorf("required: %s", stderr)
	}
	// Recovered after two failures: posted.
	gh.Fail(forgetest.ServerError, 2, "")
	if res, _ := e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--name", "coverage", "--comment=required"); res[0].Feedback.Comment != "created" {
		t.Errorf("after recovery: %+v", res[0].Feedback)
	}
}

// A pull request from a fork gets no token: the comment is in the step
// summary, and the job says why.
func TestUploadCommentForkWithoutToken(t *testing.T) {
	e := startCLIEnv(t)
	cov := sitegen.CoveragePy(t)
	gh := forgetest.GitHub(t, "ghs_test")
	summary := filepath.Join(e.dir, "summary.md")
	event := filepath.Join(e.dir, "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":7,"head":{"sha":"abc","repo":{"full_name":"someone/app","fork":true}},"base":{"ref":"main","repo":{"full_name":"org/app"}}}}`), 0o644)
	env := githubEnv(gh.URL, summary)
	delete(env, "GITHUB_TOKEN")
	env["GITHUB_EVENT_PATH"] = event
	res, stderr := e.runCI(env, 0, "upload", cov.Dir, "--project-name", "web", "--create-project", "--name", "coverage", "--comment=required")
	if res[0].Feedback == nil || res[0].Feedback.Comment != "summary" || !strings.Contains(stderr, "fork") || !strings.Contains(stderr, "step summary") {
		t.Fatalf("fork: %+v\n%s", res[0].Feedback, stderr)
	}
	data, _ := os.ReadFile(summary)
	if !strings.Contains(string(data), prfeedback.Marker(res[0].ProjectID, "coverage")) {
		t.Errorf("step summary:\n%s", data)
	}
	if len(gh.Requests()) != 0 {
		t.Errorf("requests without a token: %v", gh.Requests())
	}
}

// GitLab: a merge request note, edited on the next upload, and the test
// gate on mochawesome's real failures.
func TestUploadCommentGitLab(t *testing.T) {
	e := startCLIEnv(t)
	moch := sitegen.Mochawesome(t)
	gl := forgetest.GitLab(t, "glpat-test")
	env := map[string]string{
		"GITLAB_CI": "true", "CI_API_V4_URL": gl.URL, "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "3",
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature",
		"CI_COMMIT_SHA": "0a1b2c3d4e5f", "REPORTCTL_GITLAB_TOKEN": "glpat-test",
	}
	res, stderr := e.runCI(env, 7, "upload", moch.Dir, "--project-name", "web", "--create-project", "--name", "e2e", "--comment", "--status", "--fail-on", "failures")
	if res[0].Feedback == nil || res[0].Feedback.Comment != "created" || res[0].Feedback.Status != "failure" || !strings.Contains(stderr, fmt.Sprintf("%d failed", *moch.Want.Failed)) {
		t.Fatalf("first: %+v\n%s", res[0], stderr)
	}
	// The same failures again: none is new against the first build, so
	// the new-failures gate passes (the base is the request's previous
	// build, as the target branch main has no report of that name).
	res, stderr = e.runCI(env, 0, "upload", moch.Dir, "--project-name", "web", "--name", "e2e", "--comment", "--status", "--fail-on", "new-failures")
	if res[0].Feedback.Comment != "updated" || len(res[0].Gates) != 1 || !res[0].Gates[0].Passed {
		t.Fatalf("second: %+v %+v\n%s", res[0].Feedback, res[0].Gates, stderr)
	}
	if ours := ourComments(gl, res[0].ProjectID, "e2e"); len(gl.Comments()) != 1 || len(ours) != 1 || !strings.Contains(ours[0].Body, fmt.Sprintf("| Failed | %d |", *moch.Want.Failed)) {
		t.Errorf("notes %+v", gl.Comments())
	}
	if st := gl.Statuses(); len(st) != 2 || st[0].State != "failed" || st[1].State != "success" || st[0].Name != "reportd/e2e" {
		t.Errorf("statuses %+v", st)
	}
}
