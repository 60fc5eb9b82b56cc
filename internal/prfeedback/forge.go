package prfeedback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/reportd/reportd/internal/restylog"
)

// The forges are called with resty (already reportctl's HTTP client)
// against their documented REST paths rather than through go-github and
// GitLab's client-go: measured with go build -ldflags='-s -w'
// ./cmd/reportctl, go-github alone took reportctl from 12.56 MB to
// 16.35 MB and client-go with it to 20.78 MB, far past the 1.5 MB such a
// feature may add to the watched size. Six calls do not need either.

// Comment is one comment of a pull request or note of a merge request.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	URL  string `json:"html_url"` // GitHub only
}

// Status is a commit status.
type Status struct {
	State       string // StatePending, StateSuccess, StateFailure
	Context     string // e.g. "reportd/coverage"
	Description string
	TargetURL   string
}

// Commit status states, mapped to each forge's own words.
const (
	StatePending = "pending"
	StateSuccess = "success"
	StateFailure = "failure"
)

// forge is what feedback needs of GitHub or GitLab.
type forge interface {
	comments(ctx context.Context) ([]Comment, error)
	create(ctx context.Context, body string) (Comment, error)
	update(ctx context.Context, id int64, body string) (Comment, error)
	status(ctx context.Context, sha string, s Status) error
}

// maxCommentPages bounds the listing of a request's comments (100 a page).
const maxCommentPages = 50

// maxAnswerBytes bounds one answer of a forge read into memory: a page of
// 100 GitHub comments of 65,536 characters each is at most ~27 MB.
const maxAnswerBytes = 32 << 20

func newForge(t Target, r Retry) (forge, error) {
	base, err := url.Parse(strings.TrimRight(t.APIURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("API URL %q is not an http(s) URL", t.APIURL)
	}
	// Redirects stay on the API's host: the token is in a header (GitLab's
	// PRIVATE-TOKEN) that Go would carry to another host.
	rc := r.client().SetBaseURL(base.String()).SetHeader("User-Agent", "reportctl").
		SetRedirectPolicy(resty.DomainCheckRedirectPolicy(base.Hostname()))
	switch t.Forge {
	case GitHub:
		owner, name, ok := strings.Cut(t.Repo, "/")
		if !ok || owner == "" || name == "" {
			return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", t.Repo)
		}
		// https://docs.github.com/en/rest/issues/comments, /rest/commits/statuses
		rc.SetHeader("Accept", "application/vnd.github+json").
			SetHeader("X-GitHub-Api-Version", "2022-11-28").
			SetAuthToken(t.Token)
		return &githubForge{c: rc, repo: "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name), number: t.Number}, nil
	case GitLab:
		// https://docs.gitlab.com/api/notes/#merge-requests, /api/commits/#set-the-pipeline-status-of-a-commit
		rc.SetHeader("Accept", "application/json").SetHeader("PRIVATE-TOKEN", t.Token)
		return &gitlabForge{c: rc, project: "/projects/" + url.PathEscape(t.Repo), iid: t.Number}, nil
	}
	return nil, fmt.Errorf("unknown forge %q", t.Forge)
}

// client is a resty client that retries as Retry says.
func (r Retry) client() *resty.Client {
	r = r.norm()
	return resty.New().
		SetLogger(restylog.Silent{}). // reportctl tells the failure once; resty logged each attempt
		SetTimeout(30 * time.Second).
		SetResponseBodyLimit(maxAnswerBytes).
		SetRetryCount(r.Retries).
		SetRetryWaitTime(r.Wait).
		SetRetryMaxWaitTime(r.MaxWait).
		AddRetryCondition(func(resp *resty.Response, err error) bool {
			if errors.Is(err, resty.ErrResponseBodyTooLarge) {
				return false // it would be as large again
			}
			if err != nil {
				return resp == nil || resp.Request == nil || resp.Request.Context().Err() == nil
			}
			return retryable(resp.RawResponse)
		}).
		SetRetryAfter(func(_ *resty.Client, resp *resty.Response) (time.Duration, error) {
			if resp == nil || resp.RawResponse == nil {
				return 0, nil
			}
			d, ok := serverWait(resp.Header(), time.Now())
			if !ok || d <= 0 {
				return 0, nil // the doubling backoff
			}
			if d > r.MaxWait {
				return 0, fmt.Errorf("%s: rate limited for %s more, longer than reportctl waits (%s)", resp.Status(), d.Round(time.Second), r.MaxWait)
			}
			return d, nil
		})
}

// call sends one request and decodes a 2xx answer into out; any other
// answer is an error with the forge's message.
func call(ctx context.Context, req *resty.Request, method, path string, out any) (*resty.Response, error) {
	resp, err := req.SetContext(ctx).SetResult(out).Execute(method, path)
	if err != nil {
		return resp, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.IsError() {
		return resp, &apiError{status: resp.StatusCode(), msg: fmt.Sprintf("%s %s: %s%s", method, path, resp.Status(), apiMessage(resp.Body()))}
	}
	return resp, nil
}

// apiError is a forge's answer other than 2xx.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// refusedOrGone tells whether err is the forge's 403 or 404: the comment
// is not ours to edit (another author carries the marker) or is gone.
func refusedOrGone(err error) bool {
	var e *apiError
	return errors.As(err, &e) && (e.status == http.StatusForbidden || e.status == http.StatusNotFound)
}

// apiMessage is ": message" of an error body ({"message": ...} on both
// forges, {"error": ...} on some GitLab answers), or "".
func apiMessage(body []byte) string {
	var e struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	switch m := e.Message.(type) {
	case string:
		if m != "" {
			return ": " + m
		}
	case nil:
	default:
		b, _ := json.Marshal(m)
		return ": " + string(b)
	}
	if e.Error != "" {
		return ": " + e.Error
	}
	return ""
}

type githubForge struct {
	c      *resty.Client
	repo   string // /repos/{owner}/{repo}
	number int
}

func (g *githubForge) comments(ctx context.Context) ([]Comment, error) {
	var out []Comment
	path := g.repo + "/issues/" + strconv.Itoa(g.number) + "/comments"
	for page := 1; page <= maxCommentPages; page++ {
		var cs []Comment
		resp, err := call(ctx, g.c.R().SetQueryParam("per_page", "100").SetQueryParam("page", strconv.Itoa(page)), "GET", path, &cs)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
		if !strings.Contains(resp.Header().Get("Link"), `rel="next"`) {
			break
		}
	}
	return out, nil
}

func (g *githubForge) create(ctx context.Context, body string) (Comment, error) {
	var c Comment
	_, err := call(ctx, g.c.R().SetBody(map[string]string{"body": body}), "POST", g.repo+"/issues/"+strconv.Itoa(g.number)+"/comments", &c)
	return c, err
}

func (g *githubForge) update(ctx context.Context, id int64, body string) (Comment, error) {
	var c Comment
	_, err := call(ctx, g.c.R().SetBody(map[string]string{"body": body}), "PATCH", g.repo+"/issues/comments/"+strconv.FormatInt(id, 10), &c)
	return c, err
}

func (g *githubForge) status(ctx context.Context, sha string, s Status) error {
	in := map[string]string{"state": s.State, "context": s.Context, "description": s.Description}
	if s.TargetURL != "" {
		in["target_url"] = s.TargetURL
	}
	_, err := call(ctx, g.c.R().SetBody(in), "POST", g.repo+"/statuses/"+url.PathEscape(sha), &struct{}{})
	return err
}

type gitlabForge struct {
	c       *resty.Client
	project string // /projects/{id}
	iid     int
}

func (g *gitlabForge) notes() string {
	return g.project + "/merge_requests/" + strconv.Itoa(g.iid) + "/notes"
}

func (g *gitlabForge) comments(ctx context.Context) ([]Comment, error) {
	var out []Comment
	page := "1"
	for range maxCommentPages {
		var ns []Comment
		resp, err := call(ctx, g.c.R().SetQueryParam("per_page", "100").SetQueryParam("page", page), "GET", g.notes(), &ns)
		if err != nil {
			return nil, err
		}
		out = append(out, ns...)
		if page = resp.Header().Get("X-Next-Page"); page == "" {
			break
		}
	}
	return out, nil
}

func (g *gitlabForge) create(ctx context.Context, body string) (Comment, error) {
	var c Comment
	_, err := call(ctx, g.c.R().SetBody(map[string]string{"body": body}), "POST", g.notes(), &c)
	return c, err
}

func (g *gitlabForge) update(ctx context.Context, id int64, body string) (Comment, error) {
	var c Comment
	_, err := call(ctx, g.c.R().SetBody(map[string]string{"body": body}), "PUT", g.notes()+"/"+strconv.FormatInt(id, 10), &c)
	return c, err
}

func (g *gitlabForge) status(ctx context.Context, sha string, s Status) error {
	state := map[string]string{StatePending: "pending", StateSuccess: "success", StateFailure: "failed"}[s.State]
	in := map[string]string{"state": state, "name": s.Context, "description": s.Description}
	if s.TargetURL != "" {
		in["target_url"] = s.TargetURL
	}
	_, err := call(ctx, g.c.R().SetBody(in), "POST", g.project+"/statuses/"+url.PathEscape(sha), &struct{}{})
	return err
}
