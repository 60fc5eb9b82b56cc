package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// Every malformed policy or prune request is a ValidationError (404 for a
// missing project under conventional statuses), answered through the
// one error writer and matching the document; none changes the policy.
func TestRetentionBadInput(t *testing.T) {
	e := newAPIEnv(t, envOpts{mode: httpapi.StatusConventional})
	p := decode[report.Project](t, e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "bad"})))
	rp := fmt.Sprintf("/api/projects/%d", p.ID)
	wantStatus(t, e.do(jsonCall("PUT", rp+"/retention", map[string]any{"keepLast": 4})), 200)
	put := func(body string) apiCall {
		return apiCall{method: "PUT", path: rp + "/retention", body: []byte(body), ctype: "application/json", raw: true}
	}
	post := func(path, body string) apiCall {
		return apiCall{method: "POST", path: path, body: []byte(body), ctype: "application/json", raw: true}
	}
	for _, c := range []struct {
		call apiCall
		want string
	}{
		{put(``), "must be a JSON object"},
		{put(`null`), "must be a JSON object"},
		{put(`[]`), "must be a JSON object"},
		{put(`{"keepLast":"5"}`), "keepLast must be a whole number"},
		{put(`{"keepLast":1.5}`), "keepLast must be a whole number"},
		{put(`{"keepLast":-1}`), "keepLast must be 0"},
		{put(`{"keepLast":1000001}`), "keepLast must be 0"},
		{put(`{"maxAgeDays":36501}`), "maxAgeDays must be 0"},
		{put(`{"keepNewestPerBranch":"yes"}`), "keepNewestPerBranch must be"},
		{put(`{"keep_last":3}`), `unknown policy field \"keep_last\"`},
		{put(`{"keepLast":3} {}`), "must be a JSON object"},
		{put(`{"keepLast":` + strings.Repeat("9", 70000) + `}`), "larger than"},
		{post(rp+"/prune", `{"maxAgeDays":-3}`), "maxAgeDays must be 0"},
		{post(rp+"/prune?dryRun=yes", ``), "dryRun must be true or false"},
		{post(rp+"/prune?dryRun=true&dryRun=false", ``), "dryRun must be true or false"},
		{post("/api/prune", `{"nope":1}`), "unknown policy field"},
	} {
		r := e.do(c.call)
		if r.status != 400 || !strings.Contains(string(r.body), `"type":"ValidationError"`) || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s %s %.40q: %s, want 400 ValidationError %q", c.call.method, c.call.path, c.call.body, r, c.want)
		}
	}
	for _, c := range []apiCall{
		{method: "GET", path: "/api/projects/999/retention"},
		jsonCall("PUT", "/api/projects/999/retention", map[string]any{}),
		{method: "POST", path: "/api/projects/999/prune?dryRun=true"},
	} {
		if r := e.do(c); r.status != 404 || !strings.Contains(string(r.body), "NotFoundError") {
			t.Errorf("%s %s: %s, want NotFoundError", c.method, c.path, r)
		}
	}
	if got := decode[report.RetentionView](t, e.do(apiCall{method: "GET", path: rp + "/retention"})); got.KeepLast == nil || *got.KeepLast != 4 {
		t.Fatalf("a refused request changed the policy: %+v", got)
	}
}
