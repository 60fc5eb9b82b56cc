package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/testfixture"
)

// refLinksMD has what the dashboard's old hand-written renderer got wrong
// (reference-style links, shown literally) next to a table and fenced code.
const refLinksMD = "# Release notes\n\n" +
	"See the [changelog][log] and the [guide][] for details.\n\n" +
	"| Suite | Passed | Failed |\n|:--|--:|--:|\n| unit | 412 | 0 |\n| e2e | 57 | 2 |\n\n" +
	"```go\nfmt.Println(\"<ok>\")\n```\n\n" +
	"[log]: https://example.com/changelog \"Changelog\"\n" +
	"[guide]: https://example.com/guide\n"

// TestMarkdownRenderedByServer: the dashboard shows a Markdown report as
// the daemon renders it for the PDF, in a sandboxed frame without scripts.
func TestMarkdownRenderedByServer(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	proj := d.api(t, "POST", "/projects", map[string]any{"name": "Notes"})
	id := uploadMD(t, d, int64(proj["id"].(float64)), "notes.md", refLinksMD)

	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", d.base, id)))
	got := readMarkdownFrame(t, b)

	if got.H1 != "Release notes" {
		t.Errorf("heading %q", got.H1)
	}
	wantLinks := [][]string{{"changelog", "https://example.com/changelog"}, {"guide", "https://example.com/guide"}}
	if !slices.EqualFunc(got.Links, wantLinks, slices.Equal) {
		t.Errorf("links %q, want %q", got.Links, wantLinks)
	}
	if strings.Contains(got.Text, "[log]") || strings.Contains(got.Text, "[guide]") {
		t.Errorf("reference-style link shown literally:\n%s", got.Text)
	}
	wantCells := []string{"Suite", "Passed", "Failed", "unit", "412", "0", "e2e", "57", "2"}
	if !slices.Equal(got.Cells, wantCells) {
		t.Errorf("table cells %q, want %q", got.Cells, wantCells)
	}
	if strings.TrimSpace(got.Code) != `fmt.Println("<ok>")` {
		t.Errorf("code block %q", got.Code)
	}
	if got.Scripts != 0 || !got.Style {
		t.Errorf("scripts %d, stylesheet in effect %v", got.Scripts, got.Style)
	}

	// The frame runs nothing and the dashboard cannot reach into it.
	frame := eval[map[string]string](b, `(() => { const f = document.querySelector('.viewer-md iframe'); return { sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src') }; })()`)
	if frame["sandbox"] != "" || frame["src"] != fmt.Sprintf("api/reports/%d/html", id) {
		t.Errorf("markdown frame %v", frame)
	}
	if eval[bool](b, `(() => { try { return !!document.querySelector('.viewer-md iframe').contentDocument; } catch { return false; } })()`) {
		t.Error("the dashboard can reach into the rendered document")
	}
	res, err := http.Get(fmt.Sprintf("%s/api/reports/%d/html", d.base, id))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox;") || strings.Contains(csp, "script") ||
		res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("headers of the rendering: %v", res.Header)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems: %v", p)
	}
}

// uploadMD publishes a Markdown report through the API and returns its id.
func uploadMD(t *testing.T, d *daemon, project int64, name, text string) int64 {
	t.Helper()
	ct, body := testfixture.UploadBody(project, "md", name, []byte(text), nil)
	res, err := http.Post(d.base+"/api/reports", ct, body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep struct{ ID int64 }
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload: status %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	return rep.ID
}
