// Package forgetest runs fake GitHub and GitLab REST APIs on 127.0.0.1
// for tests of pull-request feedback: the paths, methods, headers and JSON
// of the real APIs (docs.github.com/en/rest/issues/comments,
// /rest/commits/statuses; docs.gitlab.com/api/notes, /api/commits), with
// the comments kept in memory and faults to inject.
package forgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is how the fake answers the requests it is told to fail.
type Fault int

const (
	None          Fault = iota
	RateLimited         // GitHub: 403 with X-RateLimit-Remaining: 0 and a reset 1 s away; GitLab: 429 with RateLimit-Reset
	RetryAfter          // 429 with Retry-After: 1
	ServerError         // 502 Bad Gateway
	ReadOnlyToken       // 403 "Resource not accessible by integration" (a fork's token), never retried
)

// Comment is a stored comment or note.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
}

// Status is a commit status as set.
type Status struct {
	SHA         string
	State       string `json:"state"`
	Context     string `json:"context"` // GitHub
	Name        string `json:"name"`    // GitLab
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// Server is one fake forge.
type Server struct {
	URL string // the API root: GitHub's https://api.github.com, GitLab's .../api/v4

	t      testing.TB
	gitlab bool
	token  string

	mu       sync.Mutex
	comments map[string][]Comment // by request path of the list
	statuses []Status
	nextID   int64
	requests []string // "METHOD path", in order
	fault    Fault
	faults   int    // how many more requests fail
	faultOn  string // only requests with this method fail ("" any)
}

// GitHub starts a fake GitHub API that accepts token.
func GitHub(t testing.TB, token string) *Server { return start(t, false, token) }

// GitLab starts a fake GitLab API (root /api/v4) that accepts token.
func GitLab(t testing.TB, token string) *Server { return start(t, true, token) }

func start(t testing.TB, gitlab bool, token string) *Server {
	s := &Server{t: t, gitlab: gitlab, token: token, comments: map[string][]Comment{}, nextID: 1000}
	mux := http.NewServeMux()
	if gitlab {
		mux.HandleFunc("GET /api/v4/projects/{project}/merge_requests/{iid}/notes", s.list)
		mux.HandleFunc("POST /api/v4/projects/{project}/merge_requests/{iid}/notes", s.create)
		mux.HandleFunc("PUT /api/v4/projects/{project}/merge_requests/{iid}/notes/{id}", s.update)
		mux.HandleFunc("POST /api/v4/projects/{project}/statuses/{sha}", s.status)
	} else {
		mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", s.list)
		mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", s.create)
		mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.update)
		mux.HandleFunc("POST /repos/{owner}/{repo}/statuses/{sha}", s.status)
	}
	srv := httptest.NewServer(s.guard(mux))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	if gitlab {
		s.URL += "/api/v4"
	}
	return s
}

// Fail makes the next n requests (of method, or any when "") answer with f.
func (s *Server) Fail(f Fault, n int, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.faults, s.faultOn = f, n, method
}

// Comments returns every stored comment, all requests together.
func (s *Server) Comments() []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, cs := range s.comments {
		out = append(out, cs...)
	}
	return out
}

// Statuses returns the commit statuses set, in order.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses...)
}

// Requests returns "METHOD path" of every request, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// AddComment stores a comment by someone else on request number (a
// GitHub pull request or a GitLab merge request iid) of repo (GitHub
// owner/name or GitLab project id).
func (s *Server) AddComment(repo string, number int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	k := s.listPath(repo, number)
	s.comments[k] = append(s.comments[k], Comment{ID: s.nextID, Body: body})
}

func (s *Server) listPath(repo string, number int) string {
	if s.gitlab {
		return fmt.Sprintf("/api/v4/projects/%s/merge_requests/%d/notes", repo, number)
	}
	return fmt.Sprintf("/repos/%s/issues/%d/comments", repo, number)
}

// guard checks what every real request carries and injects faults.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		fail := s.faults > 0 && (s.faultOn == "" || s.faultOn == r.Method)
		if fail {
			s.faults--
		}
		fault := s.fault
		s.mu.Unlock()

		if s.gitlab {
			if r.Header.Get("PRIVATE-TOKEN") != s.token {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "401 Unauthorized"})
				return
			}
		} else {
			if r.Header.Get("Authorization") != "Bearer "+s.token {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
				return
			}
			if r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("X-GitHub-Api-Version") == "" || r.Header.Get("User-Agent") == "" {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": "missing Accept, X-GitHub-Api-Version or User-Agent"})
				return
			}
		}
		if r.Method != http.MethodGet && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"message": "Content-Type must be application/json"})
			return
		}
		if fail {
			s.inject(w, fault)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) inject(w http.ResponseWriter, f Fault) {
	reset := strconv.FormatInt(time.Now().Add(time.Second).Unix()+1, 10)
	switch {
	case f == RateLimited && s.gitlab:
		w.Header().Set("RateLimit-Remaining", "0")
		w.Header().Set("RateLimit-Reset", reset)
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"message": "429 Too Many Requests"})
	case f == RateLimited:
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", reset)
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"})
	case f == RetryAfter:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"message": "You have exceeded a secondary rate limit"})
	case f == ServerError:
		writeJSON(w, http.StatusBadGateway, map[string]string{"message": "Server Error"})
	case f == ReadOnlyToken:
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"})
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	s.mu.Lock()
	all := s.comments[r.URL.Path]
	s.mu.Unlock()
	lo, hi := min((page-1)*per, len(all)), min(page*per, len(all))
	if hi < len(all) {
		if s.gitlab {
			w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
		} else {
			w.Header().Set("Link", fmt.Sprintf(`<%s?per_page=%d&page=%d>; rel="next"`, r.URL.Path, per, page+1))
		}
	}
	out := make([]map[string]any, 0, hi-lo)
	for _, c := range all[lo:hi] {
		out = append(out, s.render(r, c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
		return
	}
	s.mu.Lock()
	s.nextID++
	c := Comment{ID: s.nextID, Body: in.Body}
	s.comments[r.URL.Path] = append(s.comments[r.URL.Path], c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.render(r, c))
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, cs := range s.comments {
		// A GitLab note is edited through its own merge request only.
		if s.gitlab && !strings.HasPrefix(r.URL.Path, k+"/") {
			continue
		}
		for i := range cs {
			if cs[i].ID == id {
				cs[i].Body = in.Body
				writeJSON(w, http.StatusOK, s.render(r, cs[i]))
				return
			}
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	var st Status
	if json.NewDecoder(r.Body).Decode(&st) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	valid := map[string]bool{"error": true, "failure": true, "pending": true, "success": true}
	if s.gitlab {
		valid = map[string]bool{"pending": true, "running": true, "success": true, "failed": true, "canceled": true, "skipped": true}
	}
	if !valid[st.State] || (!s.gitlab && len([]rune(st.Description)) > 140) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	st.SHA = r.PathValue("sha")
	s.mu.Lock()
	s.statuses = append(s.statuses, st)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"id": 1, "state": st.State, "description": st.Description, "target_url": st.TargetURL})
}

func (s *Server) render(r *http.Request, c Comment) map[string]any {
	if s.gitlab {
		return map[string]any{"id": c.ID, "type": nil, "body": c.Body, "author": map[string]any{"username": "reportd-bot"}, "system": false, "noteable_type": "MergeRequest", "noteable_iid": r.PathValue("iid")}
	}
	return map[string]any{"id": c.ID, "node_id": "IC_x", "body": c.Body, "user": map[string]any{"login": "github-actions[bot]"},
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%s#issuecomment-%d", r.PathValue("owner"), r.PathValue("repo"), r.PathValue("number"), c.ID)}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
