package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testbrowser"
)

// TestLighthouse audits the dashboard as people meet it, with Lighthouse
// (npm, pinned in scripts/install-deps.sh) in the repository's Chromium:
// the home page, a project page and a site report's page (a real
// Playwright report, framed from its content origin) of a real daemon
// with data. Accessibility must score at least 0.98 and best practices 1.
// Lighthouse and Chromium are test dependencies: without them the test
// fails with how to install them rather than passing unseen.
func TestLighthouse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Lighthouse in Chromium")
	}
	lighthouse, err := sitegen.Tool("lighthouse")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(testbrowser.Chromium); err != nil {
		t.Fatalf("%s: %v (bash scripts/install-deps.sh test installs it)", testbrowser.Chromium, err)
	}
	d := startSiteDaemon(t, false)
	// Playwright's report: coverage.py's own script listens for "unload",
	// which Chromium reports as a deprecated API against any page framing
	// it; that is the report's code, not the dashboard's.
	site := d.publish(t, sitegen.Playwright(t).Dir, "--name", "e2e", "--branch", "main")
	notes := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(notes, []byte("# Release notes\n\n- one\n- two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := reportctl(t, "upload", notes, "--server", d.base, "--token", d.token, "--project", fmt.Sprint(d.project)); code != 0 {
		t.Fatalf("upload notes.md: exit %d: %s", code, stderr)
	}

	pages := []struct {
		name, url string
		frame     string // an origin the page must have loaded from (200)
	}{
		{"home", d.base + "/", ""},
		{"project", fmt.Sprintf("%s/#/projects/%d", d.base, d.project), ""},
		{"site report", fmt.Sprintf("%s/#/reports/%d", d.base, site.ID), origin(t, site.SiteURL)},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			scores, failed, loaded := runLighthouse(t, lighthouse, p.url)
			if p.frame != "" && !loaded[p.frame] {
				t.Errorf("%s: the audit never loaded the report from %s (loaded: %v): the frame was not part of it", p.url, p.frame, loaded)
			}
			t.Logf("%s: accessibility %.2f, best practices %.2f", p.url, scores["accessibility"], scores["best-practices"])
			if scores["accessibility"] < 0.98 || scores["best-practices"] < 1 {
				t.Errorf("%s: accessibility %.2f (want >= 0.98), best practices %.2f (want 1); failed audits:\n%s",
					p.url, scores["accessibility"], scores["best-practices"], strings.Join(failed, "\n"))
			}
		})
	}
}

// lhReport is the part of Lighthouse's JSON report the test reads.
type lhReport struct {
	RuntimeError *struct{ Code, Message string } `json:"runtimeError"`
	Categories   map[string]struct {
		Score *float64 `json:"score"`
		Refs  []struct {
			ID string `json:"id"`
		} `json:"auditRefs"`
	} `json:"categories"`
	Audits map[string]struct {
		Title   string          `json:"title"`
		Score   *float64        `json:"score"`
		Mode    string          `json:"scoreDisplayMode"`
		Details json.RawMessage `json:"details"`
	} `json:"audits"`
}

// lhRequests are the details of the network-requests audit.
type lhRequests struct {
	Items []struct {
		URL        string `json:"url"`
		StatusCode int    `json:"statusCode"`
	} `json:"items"`
}

// runLighthouse audits url for accessibility and best practices and
// returns the category scores, the audits that did not pass, with their
// details (which elements, which console lines), and the origins it
// loaded something from with status 200.
func runLighthouse(t *testing.T, lighthouse, url string) (map[string]float64, []string, map[string]bool) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "lighthouse.json")
	// Generous: two cores shared with the rest of the suite.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lighthouse, url,
		"--only-categories=accessibility,best-practices",
		"--only-audits=network-requests", // in addition to the categories' audits
		"--output=json", "--output-path="+out, "--quiet",
		"--max-wait-for-load=90000",
		// Chromium resolves *.localhost (the report origins) to loopback itself.
		"--chrome-flags=--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="+t.TempDir())
	cmd.Env = append(os.Environ(), "CHROME_PATH="+testbrowser.Chromium, "NO_COLOR=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lighthouse %s: %v\n%s", url, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r lhReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("lighthouse report: %v", err)
	}
	if r.RuntimeError != nil && r.RuntimeError.Code != "" {
		t.Fatalf("lighthouse %s: %s: %s", url, r.RuntimeError.Code, r.RuntimeError.Message)
	}
	scores := map[string]float64{}
	var failed []string
	for name, c := range r.Categories {
		if c.Score == nil {
			t.Fatalf("lighthouse %s: no %s score", url, name)
		}
		scores[name] = *c.Score
		for _, ref := range c.Refs {
			a := r.Audits[ref.ID]
			if a.Score != nil && *a.Score < 1 && (a.Mode == "binary" || a.Mode == "numeric") {
				failed = append(failed, fmt.Sprintf("  %s (%s, score %.2f): %.1500s", ref.ID, a.Title, *a.Score, a.Details))
			}
		}
	}
	sort.Strings(failed)
	var reqs lhRequests
	if err := json.Unmarshal(r.Audits["network-requests"].Details, &reqs); err != nil {
		t.Fatalf("lighthouse network-requests: %v", err)
	}
	loaded := map[string]bool{}
	for _, q := range reqs.Items {
		if q.StatusCode == 200 && strings.HasPrefix(q.URL, "http") {
			loaded[origin(t, q.URL)] = true
		}
	}
	return scores, failed, loaded
}
