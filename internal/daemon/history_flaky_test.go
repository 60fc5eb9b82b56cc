package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// TestHistoryFlakyBothStores: on bbolt and on PostgreSQL, a mochawesome
// test that passes, fails on the same commit, then fails and passes again
// on main is marked flaky at the points the rule says (same commit: the
// second; two changes within the branch's window: the fourth), and the
// history's marking at the newest point equals compare's flaky list.
func TestHistoryFlakyBothStores(t *testing.T) {
	passed, err := os.ReadFile("../detect/testdata/mochawesome.html")
	if err != nil {
		t.Fatal(err)
	}
	const pass = "&quot;state&quot;:&quot;passed&quot;,&quot;pass&quot;:true,&quot;fail&quot;:false"
	failed := []byte(strings.Replace(string(passed), pass, "&quot;state&quot;:&quot;failed&quot;,&quot;pass&quot;:false,&quot;fail&quot;:true", 1))
	onBothStores(t, func(t *testing.T, c config.Config) {
		s, _ := startServer(t, c)
		base := "http://" + s.Addr()
		p := createProject(t, base, "flaky")
		builds := []struct {
			commit string
			body   []byte
		}{{"a", passed}, {"a", failed}, {"b", passed}, {"c", failed}, {"d", failed}}
		var ids []int64
		for _, b := range builds {
			ct, body := testfixture.UploadBody(p.ID, "html", "mochawesome.html", b.body, map[string]string{"name": "mocha", "branch": "main", "commit": b.commit})
			resp, err := httpClient.Post(base+"/api/reports", ct, body)
			if err != nil {
				t.Fatal(err)
			}
			var r apiReport
			decErr := json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if resp.StatusCode != 201 || decErr != nil {
				t.Fatalf("upload %s: %s %v", b.commit, resp.Status, decErr)
			}
			ids = append(ids, r.ID)
		}
		var pts []report.HistoryPoint
		getJSON(t, fmt.Sprintf("%s/api/projects/%d/history?name=mocha&branch=main&flaky=true", base, p.ID), &pts)
		got := []int{}
		for _, pt := range pts {
			got = append(got, len(pt.Flaky))
		}
		// a: passed; a: failed (same commit); b: passed (changes: 2); c: failed (3); d: failed (3 within the window).
		if fmt.Sprint(got) != "[0 1 1 1 1]" || !strings.HasPrefix(pts[1].Flaky[0].Title, "adds") {
			t.Fatalf("flaky per point %v: %+v", got, pts)
		}
		var cmp report.Comparison
		getJSON(t, fmt.Sprintf("%s/api/reports/%d/compare", base, ids[4]), &cmp)
		if len(cmp.Flaky) != 1 || cmp.Flaky[0] != pts[4].Flaky[0] {
			t.Fatalf("compare's flaky %+v, history's %+v", cmp.Flaky, pts[4].Flaky)
		}
	})
}
