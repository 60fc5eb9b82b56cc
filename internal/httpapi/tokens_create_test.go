package httpapi_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// TestTokenCreatesProjects: an upload token made with
// --allow-create-projects creates projects (only with its prefix), each
// joins its set (concurrent creations included) so it can upload there,
// and it stays limited to that set; a plain upload token is told which
// token would do.
func TestTokenCreatesProjects(t *testing.T) {
	for _, reads := range []bool{false, true} {
		t.Run("reads="+strconv.FormatBool(reads), func(t *testing.T) {
			te := startTokenEnv(t, httpapi.StatusConventional, reads)
			set := te.Server.Tokens()
			tok, secret, err := set.Create(tokens.Spec{Name: "ci", Scope: tokens.Upload, CreateProjects: true, ProjectPrefix: "ci-"})
			if err != nil {
				t.Fatal(err)
			}
			te.auth["creator"] = "Bearer " + secret
			create := func(who, name string) *apitest.Response {
				return te.call(who, "POST", "/api/projects", strings.NewReader(`{"name":"`+name+`"}`), "application/json")
			}
			// Before it created any: limited to nothing; another project is
			// as missing to it as one that does not exist (issue 21's rule).
			if r := te.upload("creator", "1", true); r.StatusCode != http.StatusNotFound || !strings.Contains(string(r.Body), "project 1 not found") {
				t.Errorf("upload into A before creating: %d %s", r.StatusCode, r.Body)
			}
			if r := create("creator", "prod"); r.StatusCode != http.StatusForbidden || !strings.Contains(string(r.Body), `start with \"ci-\"`) {
				t.Errorf("a name outside the prefix: %d %s", r.StatusCode, r.Body)
			}
			if r := create("uploadA", "ci-x"); r.StatusCode != http.StatusForbidden || !strings.Contains(string(r.Body), "--allow-create-projects") {
				t.Errorf("a plain upload token creating: %d %s", r.StatusCode, r.Body)
			}
			var ps []report.Project
			te.mustOK(te.call("admin", "GET", "/api/projects", nil, "")).JSON(t, &ps)
			if len(ps) != 2 {
				t.Fatalf("refused creations stored projects: %+v", ps)
			}

			const n = 6
			ids := make([]int64, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					var p report.Project
					r := create("creator", "ci-"+strconv.Itoa(i))
					if r.StatusCode != http.StatusCreated {
						t.Errorf("create ci-%d: %d %s", i, r.StatusCode, r.Body)
						return
					}
					r.JSON(t, &p)
					ids[i] = p.ID
				})
			}
			wg.Wait()
			var got tokens.Token
			for _, x := range set.List() {
				if x.ID == tok.ID {
					got = x
				}
			}
			want := slices.Sorted(slices.Values(ids))
			if !slices.Equal(got.Projects, want) {
				t.Fatalf("the token's projects %v, want the %d it created %v", got.Projects, n, want)
			}
			for _, id := range ids {
				te.mustOK(te.upload("creator", strconv.FormatInt(id, 10), false))
			}
			if r := te.upload("creator", "2", true); r.StatusCode != http.StatusNotFound || !strings.Contains(string(r.Body), "project 2 not found") {
				t.Errorf("upload into B: %d %s", r.StatusCode, r.Body)
			}
			for _, path := range []string{"/api/projects/" + strconv.FormatInt(ids[0], 10), "/api/reports/1"} {
				if r := te.call("creator", "DELETE", path, nil, ""); r.StatusCode != http.StatusForbidden {
					t.Errorf("DELETE %s: %d %s", path, r.StatusCode, r.Body)
				}
			}
			if reads {
				te.mustOK(te.call("creator", "GET", "/api/projects", nil, "")).JSON(t, &ps)
				if len(ps) != n {
					t.Errorf("with auth.reads the creator lists %d projects, want its %d", len(ps), n)
				}
			}
		})
	}
}
