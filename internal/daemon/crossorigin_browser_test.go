package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/testbrowser"
)

// TestBrowserCrossOriginChangesRefused: in real Chromium, a site report
// opened on its content origin ({id}.localhost) tries to change things
// through the API of a daemon with no token (the loopback default): a
// DELETE of itself and of another report (preflighted), and a POST that
// needs no preflight, against the API by 127.0.0.1 (cross-site) and by
// localhost (same-site). Every one is refused with ForbiddenError, both
// reports and the project list are unchanged, and the page could still
// read (GET is not refused).
func TestBrowserCrossOriginChangesRefused(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.ErrorStatus = "conventional"
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
	api := "http://" + s.Addr()
	_, apiPort, _ := strings.Cut(s.Addr(), ":")
	cl := &http.Client{Timeout: waitLong}
	call := func(method, path, ct string, body io.Reader) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, api+path, body)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	st, b := call("POST", "/api/projects", "application/json", strings.NewReader(`{"name":"victim"}`))
	var proj struct{ ID int64 }
	if st != http.StatusCreated || json.Unmarshal(b, &proj) != nil {
		t.Fatalf("project: %d %s", st, b)
	}
	upload := func(name string, data []byte, extra ...string) (id int64, siteURL string) {
		t.Helper()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("projectId", fmt.Sprint(proj.ID))
		mw.WriteField("fileType", "html")
		for i := 0; i+1 < len(extra); i += 2 {
			fw, _ := mw.CreateFormFile("file", extra[i])
			io.WriteString(fw, extra[i+1])
		}
		if data != nil {
			fw, _ := mw.CreateFormFile("file", name)
			fw.Write(data)
		}
		mw.Close()
		st, b := call("POST", "/api/reports", mw.FormDataContentType(), &body)
		var rep struct {
			ID      int64
			SiteURL string `json:"siteUrl"`
		}
		if st != http.StatusCreated || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("upload %s: %d %s", name, st, b)
		}
		return rep.ID, rep.SiteURL
	}
	other, _ := upload("other.html", []byte("<p>another report</p>"))
	attack := fmt.Sprintf(`(async () => {
  const self = location.hostname.split('.')[0], out = {};
  const bases = {cross: 'http://127.0.0.1:%[1]s', same: 'http://localhost:%[1]s'};
  for (const [k, base] of Object.entries(bases)) {
    const tries = {
      deleteSelf: [base + '/api/reports/' + self, {method: 'DELETE'}],
      deleteOther: [base + '/api/reports/%[2]d', {method: 'DELETE'}],
      simplePost: [base + '/api/projects', {method: 'POST', headers: {'Content-Type': 'text/plain'}, body: '{"name":"planted"}'}],
      read: [base + '/api/reports/%[2]d', {}],
    };
    for (const [name, [url, init]] of Object.entries(tries)) {
      try { const r = await fetch(url, init); out[k + '.' + name] = r.status + ' ' + (await r.text()); }
      catch (e) { out[k + '.' + name] = 'failed: ' + e; }
    }
  }
  document.body.dataset.result = JSON.stringify(out);
})();`, apiPort, other)
	_, siteURL := upload("", nil, "site/index.html", `<!DOCTYPE html><title>hostile</title><body><script src="app.js"></script></body>`, "site/app.js", attack)
	if !strings.Contains(siteURL, ".localhost:") {
		t.Fatalf("siteUrl %q is not a per-report origin", siteURL)
	}

	tab := testbrowser.Start(t, 3*time.Minute)
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(siteURL)); err != nil {
		t.Fatalf("browser: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Poll[string](`document.body && document.body.dataset.result`, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("result %q: %v", raw, err)
	}
	for _, k := range []string{"cross", "same"} {
		for _, name := range []string{"deleteSelf", "deleteOther", "simplePost"} {
			got := out[k+"."+name]
			if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "ForbiddenError") || !strings.Contains(got, "refused") {
				t.Errorf("%s %s from the report's page: %s", k, name, got)
			}
		}
		if got := out[k+".read"]; !strings.HasPrefix(got, "200 ") {
			t.Errorf("%s read from the report's page: %s (reads are not refused)", k, got)
		}
	}
	st, b = call("GET", "/api/reports", "", nil)
	var list []struct{ ID int64 }
	if st != 200 || json.Unmarshal(b, &list) != nil || len(list) != 2 {
		t.Errorf("reports after the attack: %d %s, want both", st, b)
	}
	if st, b = call("GET", "/api/projects", "", nil); st != 200 || strings.Contains(string(b), "planted") {
		t.Errorf("projects after the attack: %d %s", st, b)
	}
}
