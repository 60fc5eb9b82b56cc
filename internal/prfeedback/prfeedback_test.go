package prfeedback_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/prfeedback/forgetest"
	"github.com/reportd/reportd/internal/report"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var fast = prfeedback.Retry{Retries: 3, Wait: 10 * time.Millisecond, MaxWait: 5 * time.Second}

func ptr[T any](v T) *T { return &v }

// fakeForge starts the fake API of forge and returns it with a target:
// request number of a repository on it, head commit abc123, a token it
// accepts.
func fakeForge(t *testing.T, forge string, number int) (*forgetest.Server, prfeedback.Target) {
	t.Helper()
	target := prfeedback.Target{Forge: forge, Number: number, SHA: "abc123", Token: "secret"}
	var srv *forgetest.Server
	if forge == prfeedback.GitHub {
		srv, target.Repo = forgetest.GitHub(t, "secret"), "org/app"
	} else {
		srv, target.Repo = forgetest.GitLab(t, "secret"), "42"
	}
	target.APIURL = srv.URL
	return srv, target
}

func coverageReport(lines float64) prfeedback.Report {
	return prfeedback.Report{ProjectID: 3, Name: "coverage", Generator: "coverage.py", Commit: "0123456789abcdef",
		Summary: &report.Summary{Lines: &lines}, DashboardURL: "http://127.0.0.1:1/#/reports/9", PDFURL: "http://127.0.0.1:1/api/reports/9/pdf"}
}

func TestDetect(t *testing.T) {
	event := filepath.Join(t.TempDir(), "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":12,"head":{"sha":"headsha","repo":{"full_name":"someone/app","fork":true}},"base":{"ref":"main","repo":{"full_name":"org/app"}}}}`), 0o644)
	gh, err := prfeedback.Detect(envOf(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/app", "GITHUB_REF": "refs/pull/12/merge",
		"GITHUB_SHA": "mergesha", "GITHUB_EVENT_PATH": event, "GITHUB_TOKEN": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if gh.Forge != prfeedback.GitHub || gh.Number != 12 || gh.SHA != "headsha" || gh.Base != "main" || !gh.Fork || gh.APIURL != "https://api.github.com" {
		t.Errorf("GitHub target %+v", gh)
	}
	push, _ := prfeedback.Detect(envOf(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/app", "GITHUB_REF": "refs/heads/main", "GITHUB_SHA": "s"}))
	if push.Number != 0 || push.SHA != "s" {
		t.Errorf("push target %+v", push)
	}
	gl, err := prfeedback.Detect(envOf(map[string]string{"GITLAB_CI": "true", "CI_API_V4_URL": "https://gitlab.example/api/v4", "CI_PROJECT_ID": "42",
		"CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "develop", "CI_COMMIT_SHA": "c", "REPORTCTL_GITLAB_TOKEN": "g"}))
	if err != nil || gl.Forge != prfeedback.GitLab || gl.Number != 7 || gl.Base != "develop" || gl.Token != "g" || gl.Repo != "42" {
		t.Errorf("GitLab target %+v, %v", gl, err)
	}
	if _, err := prfeedback.Detect(envOf(nil)); !errors.Is(err, prfeedback.ErrNoCI) {
		t.Errorf("outside CI: %v", err)
	}
}

// One comment per request and identity: the first upload posts, the next
// edits it in place; other people's comments (more than a page of them)
// are left alone.
func TestCommentPostedThenEdited(t *testing.T) {
	for _, forge := range []string{prfeedback.GitHub, prfeedback.GitLab} {
		t.Run(forge, func(t *testing.T) {
			srv, target := fakeForge(t, forge, 5)
			for i := range 120 {
				srv.AddComment(target.Repo, 5, "someone else "+string(rune('a'+i%26)))
			}
			ctx := context.Background()
			opts := prfeedback.Options{Comment: true, Status: true, Retry: fast}
			out, err := prfeedback.Give(ctx, target, coverageReport(81), opts)
			if err != nil || out.Comment != "created" || out.Status != prfeedback.StateSuccess {
				t.Fatalf("first: %+v, %v", out, err)
			}
			out2, err := prfeedback.Give(ctx, target, coverageReport(79.5), opts)
			if err != nil || out2.Comment != "updated" || out2.CommentID != out.CommentID {
				t.Fatalf("second: %+v, %v (first %+v)", out2, err, out)
			}
			var ours []forgetest.Comment
			for _, c := range srv.Comments() {
				if strings.Contains(c.Body, prfeedback.Marker(3, "coverage")) {
					ours = append(ours, c)
				}
			}
			if len(srv.Comments()) != 121 || len(ours) != 1 || !strings.Contains(ours[0].Body, "79.5%") {
				t.Fatalf("%d comments, ours %+v", len(srv.Comments()), ours)
			}
			// Another identity gets a comment of its own.
			other := coverageReport(50)
			other.Name = "coverage-js"
			if out, err := prfeedback.Give(ctx, target, other, prfeedback.Options{Comment: true, Retry: fast}); err != nil || out.Comment != "created" {
				t.Fatalf("other identity: %+v, %v", out, err)
			}
			st := srv.Statuses()
			if len(st) != 2 || st[0].SHA != "abc123" || st[1].TargetURL != "http://127.0.0.1:1/#/reports/9" {
				t.Fatalf("statuses %+v", st)
			}
		})
	}
}

// Rate limits and 5xx answers are retried, as the server asks; when they
// outlast the retries the error names the last answer.
func TestRetriedThenReported(t *testing.T) {
	for _, f := range []struct {
		name  string
		forge string
		fault forgetest.Fault
	}{
		{"github rate limit", prfeedback.GitHub, forgetest.RateLimited},
		{"github retry-after", prfeedback.GitHub, forgetest.RetryAfter},
		{"github 502", prfeedback.GitHub, forgetest.ServerError},
		{"gitlab rate limit", prfeedback.GitLab, forgetest.RateLimited},
		{"gitlab 502", prfeedback.GitLab, forgetest.ServerError},
	} {
		t.Run(f.name, func(t *testing.T) {
			srv, target := fakeForge(t, f.forge, 1)
			srv.Fail(f.fault, 2, "POST")
			out, err := prfeedback.Give(context.Background(), target, coverageReport(90), prfeedback.Options{Comment: true, Retry: fast})
			if err != nil || out.Comment != "created" || len(srv.Comments()) != 1 {
				t.Fatalf("after 2 faults: %+v, %v, requests %v", out, err, srv.Requests())
			}
			srv.Fail(f.fault, 100, "")
			_, err = prfeedback.Give(context.Background(), target, coverageReport(90), prfeedback.Options{Comment: true, Retry: fast})
			if err == nil || !(strings.Contains(err.Error(), "429") || strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "502")) {
				t.Fatalf("lasting fault: %v", err)
			}
			if n := len(srv.Requests()); n != 3+1+4 { // GET + 2 failed POST + POST, then GET tried 1 + 3 retries
				t.Errorf("%d requests: %v", n, srv.Requests())
			}
		})
	}
}

// A forge answer larger than any real one (here an endless comment list)
// is refused after a bounded read, not retried, and named in the error.
func TestHugeForgeAnswerBounded(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"id":1,"body":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 64 { // 64 MiB, twice the bound
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}]`)
	}))
	defer srv.Close()
	target := prfeedback.Target{Forge: prfeedback.GitHub, Number: 1, Token: "k", Repo: "o/r", APIURL: srv.URL}
	_, err := prfeedback.Give(context.Background(), target, coverageReport(90), prfeedback.Options{Comment: true, Retry: fast})
	if err == nil || !strings.Contains(err.Error(), "too large") || gets.Load() != 1 {
		t.Fatalf("endless answer: %v after %d requests", err, gets.Load())
	}
}

// A fork's pull request has no token that can write: the comment goes to
// the step summary, with a message saying why.
func TestForkDegradesToStepSummary(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	target := prfeedback.Target{Forge: prfeedback.GitHub, APIURL: "http://127.0.0.1:1", Repo: "o/r", Number: 4, Fork: true, Summary: summary}
	out, err := prfeedback.Give(context.Background(), target, coverageReport(70), prfeedback.Options{Comment: true, Retry: fast})
	if !errors.Is(err, prfeedback.ErrNoToken) || out.Comment != "summary" || !strings.Contains(err.Error(), "fork") {
		t.Fatalf("%+v, %v", out, err)
	}
	data, _ := os.ReadFile(summary)
	if !strings.Contains(string(data), prfeedback.Marker(3, "coverage")) || !strings.Contains(string(data), "70%") {
		t.Fatalf("summary:\n%s", data)
	}

	// With the read-only token GitHub gives a fork: refused, not retried, degraded.
	srv := forgetest.GitHub(t, "ro")
	srv.Fail(forgetest.ReadOnlyToken, 100, "POST")
	target.APIURL, target.Token = srv.URL, "ro"
	out, err = prfeedback.Give(context.Background(), target, coverageReport(71), prfeedback.Options{Comment: true, Retry: fast})
	if !errors.Is(err, prfeedback.ErrNoToken) || out.Comment != "summary" || !strings.Contains(err.Error(), "Resource not accessible by integration") {
		t.Fatalf("read-only token: %+v, %v", out, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("a permission 403 was retried: %v", srv.Requests())
	}
}

func TestGates(t *testing.T) {
	var gates []prfeedback.Gate
	for _, s := range []string{"coverage=80"} {
		g, err := prfeedback.ParseFailUnder(s)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	for _, s := range []string{"failures", "new-failures"} {
		g, err := prfeedback.ParseFailOn(s)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	for _, bad := range []string{"coverage", "coverage=x", "coverage=101", "branches=3"} {
		if _, err := prfeedback.ParseFailUnder(bad); err == nil {
			t.Errorf("--fail-under %s accepted", bad)
		}
	}
	if _, err := prfeedback.ParseFailOn("flaky"); err == nil {
		t.Error("--fail-on flaky accepted")
	}
	cov := prfeedback.CheckGates(gates, &report.Summary{Lines: ptr(79.99)}, nil)
	if len(cov) != 1 || cov[0].Passed {
		t.Errorf("coverage 79.99 against 80: %+v", cov)
	}
	tests := &report.Summary{Passed: ptr[int64](9), Failed: ptr[int64](1)}
	cmp := &report.Comparison{Base: &report.HistoryPoint{ReportID: 1}, StillFailing: []report.TestRef{{ID: "a"}}}
	rs := prfeedback.CheckGates(gates, tests, cmp)
	if len(rs) != 2 || rs[0].Passed || !rs[1].Passed {
		t.Errorf("one old failure: %+v", rs)
	}
	rs = prfeedback.CheckGates(gates[2:], tests, &report.Comparison{})
	if len(rs) != 1 || rs[0].Passed {
		t.Errorf("no base: every failure is new: %+v", rs)
	}
	un := prfeedback.Unchecked(gates, [][]prfeedback.GateResult{rs})
	if len(un) != 2 || un[0].Passed {
		t.Errorf("unchecked %+v", un)
	}
}

func TestBodyWithComparison(t *testing.T) {
	r := coverageReport(78.5)
	r.Summary.Failed = ptr[int64](2)
	main := "main"
	r.Comparison = &report.Comparison{
		Base:        &report.HistoryPoint{ReportID: 4, Branch: &main, Summary: &report.Summary{Lines: ptr(81.0), Failed: ptr[int64](0)}},
		Delta:       &report.Summary{Lines: ptr(-2.5), Failed: ptr[int64](2)},
		NewFailures: []report.TestRef{{ID: "t1", Title: "login works"}, {ID: "t2", Title: "logout_works"}},
		Files:       []report.FileDelta{{Path: "app/auth.py", Before: 90, After: 60}, {Path: "odd|name`\n@x.py", Before: 50, After: 40}},
	}
	r.Gates = prfeedback.CheckGates([]prfeedback.Gate{{Kind: prfeedback.GateNewFailures}}, r.Summary, r.Comparison)
	body := prfeedback.Body(r)
	for _, want := range []string{prfeedback.Marker(3, "coverage"), "❌", "[report 4](http://127.0.0.1:1/#/reports/4) on `main`",
		"| Coverage | 81% | 78.5% | −2.5 pp |", "| Failed | 0 | 2 | +2 |", "**New failures (2)**", "- [logout\\_works](http://127.0.0.1:1/#/reports/9)",
		"| `app/auth.py` | 90% | 60% |", "| `odd\\|name' @x.py` | 50% | 40% |\n", "[PDF](http://127.0.0.1:1/api/reports/9/pdf)"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if s := prfeedback.StatusOf(r); s.State != prfeedback.StateFailure || !strings.Contains(s.Description, "2 new failure") {
		t.Errorf("status %+v", s)
	}
}

// A comment of someone else that quotes the marker is not ours to edit:
// the forge refuses the edit (403) and a comment of our own is posted.
func TestMarkerInSomeoneElsesComment(t *testing.T) {
	for _, forge := range []string{prfeedback.GitHub, prfeedback.GitLab} {
		t.Run(forge, func(t *testing.T) {
			srv, target := fakeForge(t, forge, 5)
			edit := "PATCH"
			if forge == prfeedback.GitLab {
				edit = "PUT"
			}
			srv.AddComment(target.Repo, 5, "quoting the bot: "+prfeedback.Marker(3, "coverage"))
			srv.Fail(forgetest.ReadOnlyToken, 1, edit)
			out, err := prfeedback.Give(context.Background(), target, coverageReport(81), prfeedback.Options{Comment: true, Retry: fast})
			if err != nil || out.Comment != "created" {
				t.Fatalf("%+v, %v", out, err)
			}
			if n := len(srv.Comments()); n != 2 {
				t.Fatalf("%d comments, want the quote and ours", n)
			}
		})
	}
}
