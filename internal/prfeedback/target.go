// Package prfeedback is reportctl's pull-request feedback: one comment per
// pull/merge request and report identity, edited on later uploads, a
// commit status, and the quality gates that decide both. It talks to the
// GitHub and GitLab REST APIs and links no server package.
package prfeedback

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Forge names.
const (
	GitHub = "github"
	GitLab = "gitlab"
)

// Target is the pull or merge request (and commit) a CI job runs for, as
// its environment describes it.
type Target struct {
	Forge   string // GitHub or GitLab
	APIURL  string // https://api.github.com, https://gitlab.example/api/v4
	Repo    string // GitHub: owner/name; GitLab: the project id (CI_PROJECT_ID)
	Number  int    // the pull request number or merge request iid; 0 when the job is not for one
	SHA     string // the commit the status is set on (a pull request's head)
	Base    string // the branch the request merges into ("" outside a request)
	Token   string
	Fork    bool   // the pull request comes from a fork (GitHub's event file says so)
	Summary string // GITHUB_STEP_SUMMARY: where feedback goes when it cannot be posted
}

// ErrNoCI is returned by Detect outside GitHub Actions and GitLab CI.
var ErrNoCI = errors.New("not running in GitHub Actions or GitLab CI (GITHUB_ACTIONS / GITLAB_CI not set)")

// Detect reads the target from the CI environment.
//
// GitHub: GITHUB_REPOSITORY, GITHUB_API_URL (default https://api.github.com),
// GITHUB_TOKEN, the request number from GITHUB_REF (refs/pull/N/merge) or
// the event file (GITHUB_EVENT_PATH, whose pull_request also gives the head
// commit and whether it comes from a fork), the base from GITHUB_BASE_REF.
// GitLab: CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID,
// CI_MERGE_REQUEST_TARGET_BRANCH_NAME, CI_COMMIT_SHA and
// REPORTCTL_GITLAB_TOKEN (CI_JOB_TOKEN cannot write notes).
func Detect(env func(string) string) (Target, error) {
	get := func(k string) string { return strings.TrimSpace(env(k)) }
	switch {
	case strings.EqualFold(get("GITHUB_ACTIONS"), "true"):
		t := Target{Forge: GitHub, APIURL: get("GITHUB_API_URL"), Repo: get("GITHUB_REPOSITORY"),
			SHA: get("GITHUB_SHA"), Base: get("GITHUB_BASE_REF"), Token: get("GITHUB_TOKEN"), Summary: get("GITHUB_STEP_SUMMARY")}
		if t.APIURL == "" {
			t.APIURL = "https://api.github.com"
		}
		if t.Repo == "" {
			return t, errors.New("GITHUB_REPOSITORY is not set")
		}
		if n, ok := pullFromRef(get("GITHUB_REF")); ok {
			t.Number = n
		}
		if p := get("GITHUB_EVENT_PATH"); p != "" {
			if err := readGitHubEvent(p, &t); err != nil {
				return t, err
			}
		}
		return t, nil
	case strings.EqualFold(get("GITLAB_CI"), "true"):
		t := Target{Forge: GitLab, APIURL: get("CI_API_V4_URL"), Repo: get("CI_PROJECT_ID"),
			SHA: get("CI_COMMIT_SHA"), Base: get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"), Token: get("REPORTCTL_GITLAB_TOKEN")}
		if t.APIURL == "" || t.Repo == "" {
			return t, errors.New("CI_API_V4_URL and CI_PROJECT_ID must be set")
		}
		if s := get("CI_MERGE_REQUEST_IID"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return t, fmt.Errorf("CI_MERGE_REQUEST_IID %q is not a merge request number", s)
			}
			t.Number = n
		}
		return t, nil
	}
	return Target{}, ErrNoCI
}

// pullFromRef reads N from refs/pull/N/merge (or /head).
func pullFromRef(ref string) (int, bool) {
	rest, ok := strings.CutPrefix(ref, "refs/pull/")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	return n, err == nil && n > 0
}

// readGitHubEvent takes the pull request's number, head commit, base and
// fork flag from the event payload (pull_request and pull_request_target
// events; others have no pull_request and change nothing).
func readGitHubEvent(path string, t *Target) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA  string `json:"sha"`
				Repo *struct {
					FullName string `json:"full_name"`
					Fork     bool   `json:"fork"`
				} `json:"repo"`
			} `json:"head"`
			Base struct {
				Ref  string `json:"ref"`
				Repo *struct {
					FullName string `json:"full_name"`
				} `json:"repo"`
			} `json:"base"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("GITHUB_EVENT_PATH %s: %w", path, err)
	}
	pr := ev.PullRequest
	if pr == nil {
		return nil
	}
	if t.Number == 0 {
		t.Number = pr.Number
	}
	if pr.Head.SHA != "" {
		t.SHA = pr.Head.SHA // GITHUB_SHA is the merge commit GitHub made
	}
	if t.Base == "" {
		t.Base = pr.Base.Ref
	}
	if h := pr.Head.Repo; h != nil {
		t.Fork = h.Fork || (pr.Base.Repo != nil && h.FullName != "" && h.FullName != pr.Base.Repo.FullName)
	}
	return nil
}
