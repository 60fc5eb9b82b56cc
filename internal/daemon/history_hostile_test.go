package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/config"
)

// TestHistoryHostileNames: on bbolt and on PostgreSQL, a report name or
// branch no upload may have (invalid UTF-8, NUL, too long) in history,
// compare's base and stable links is a ValidationError in the spec's
// error body, and an "invalid link" image from trend.svg and badges; never
// a StorageError (PostgreSQL refuses such text rather than matching
// nothing).
func TestHistoryHostileNames(t *testing.T) {
	onBothStores(t, func(t *testing.T, c config.Config) {
		s, _ := startServer(t, c)
		base := "http://" + s.Addr()
		p := createProject(t, base, "hostile")
		st, r, e, err := upload(httpClient, base, p.ID, "md", "a.md", markdown("a", 10))
		if st != http.StatusCreated {
			t.Fatalf("upload: %d %+v %v", st, e, err)
		}
		long := strings.Repeat("n", 101)
		for _, u := range []string{
			fmt.Sprintf("/api/projects/%d/history?name=%%ff", p.ID),
			fmt.Sprintf("/api/projects/%d/history?name=a%%00b", p.ID),
			fmt.Sprintf("/api/projects/%d/history?name=%s", p.ID, long),
			fmt.Sprintf("/api/projects/%d/history?name=a&branch=%%ff", p.ID),
			fmt.Sprintf("/api/projects/%d/history?name=a&branch=%%00&format=svg", p.ID),
			fmt.Sprintf("/api/projects/%d/history?name=a&branch=%s", p.ID, strings.Repeat("b", 256)),
			fmt.Sprintf("/api/reports/%d/compare?base=branch:%%ff", r.ID),
			fmt.Sprintf("/api/reports/%d/compare?base=branch:a%%00", r.ID),
			fmt.Sprintf("/p/%d/latest/%%ff", p.ID),
			fmt.Sprintf("/p/%d/latest?name=a%%00", p.ID),
		} {
			res, err := httpClient.Get(base + u)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var ae apiError
			if err := json.Unmarshal(b, &ae); err != nil || ae.Type != "ValidationError" || res.StatusCode == http.StatusOK {
				t.Errorf("GET %s: %d %s", u, res.StatusCode, b)
			}
		}
		// Images answer as for a link that names nothing: an "invalid
		// link" badge or sparkline.
		for _, u := range []string{
			fmt.Sprintf("/p/%d/%%ff/trend.svg", p.ID),
			fmt.Sprintf("/p/%d/a/trend.svg?branch=%%00", p.ID),
			fmt.Sprintf("/p/%d/a/badge.svg?branch=%%ff", p.ID),
		} {
			if b := string(getBody(t, base+u)); !strings.HasPrefix(b, "<svg") || !strings.Contains(b, "invalid link") {
				t.Errorf("GET %s: %s", u, b)
			}
		}
		// The same endpoints still answer a valid name.
		for _, u := range []string{
			fmt.Sprintf("/api/projects/%d/history?name=a&branch=", p.ID),
			fmt.Sprintf("/api/reports/%d/compare?base=branch:main", r.ID),
			fmt.Sprintf("/p/%d/a/trend.svg", p.ID),
		} {
			getBody(t, base+u)
		}
	})
}
