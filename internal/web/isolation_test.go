package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// hostileProbe is the script of an uploaded site that tries to reach the
// dashboard (its storage, cookie, token, document, tab), the API with the
// reader's credentials, another report's files with that report's
// cookie, and to frame the dashboard. It writes what it got into its own
// DOM (body[data-result]), where the test reads it.
const hostileProbe = `(async () => {
  const cfg = window.cfg, out = {};
  const attempt = (k, f) => { try { out[k] = String(f()); } catch (e) { out[k] = 'threw ' + e.name; } };
  const framed = parent !== window;
  out.framed = framed;
  attempt('parentLocalStorage', () => framed ? JSON.stringify(Object.entries(parent.localStorage)) : 'no parent');
  attempt('parentSessionStorage', () => framed ? JSON.stringify(Object.entries(parent.sessionStorage)) : 'no parent');
  attempt('parentCookie', () => framed ? parent.document.cookie : 'no parent');
  attempt('parentDocument', () => framed ? parent.document.body.innerHTML.slice(0, 200) : 'no parent');
  attempt('ownLocalStorage', () => JSON.stringify(Object.entries(localStorage)));
  attempt('ownSessionStorage', () => JSON.stringify(Object.entries(sessionStorage)));
  attempt('cookie', () => document.cookie);
  attempt('opener', () => window.opener === null ? 'null' : 'an opener at ' + (() => { try { return window.opener.location.href; } catch (e) { return 'another origin'; } })());
  attempt('topNavigation', () => { if (!framed) return 'no parent'; top.location.href = cfg.api + '/#/hijacked'; return 'allowed'; });
  const get = async (url, init) => {
    try { const r = await fetch(url, init); return r.status + ' ' + (await r.text()).slice(0, 300); } catch (e) { return 'failed ' + e.name; }
  };
  out.apiGetCredentials = await get(cfg.api + '/api/projects', { credentials: 'include' });
  out.apiPostJSON = await get(cfg.api + '/api/projects', { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: '{"name":"pwned-json"}' });
  out.apiPostSimple = await get(cfg.api + '/api/projects', { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"pwned-simple"}' });
  out.victimFetch = await get(cfg.victim + '/secret.txt', { credentials: 'include' });
  out.victimScript = await new Promise((done) => {
    const s = document.createElement('script');
    s.src = cfg.victim + '/secret.js';
    s.onload = () => done('loaded: ' + window.victimSecret);
    s.onerror = () => done('blocked');
    document.head.append(s);
  });
  out.frameDashboard = await new Promise((done) => {
    const f = document.createElement('iframe');
    f.id = 'dash';
    f.src = cfg.api + '/#/reports/' + cfg.victimId;
    f.onload = () => {
      let doc;
      try { doc = f.contentDocument ? 'readable: ' + f.contentDocument.body.innerHTML.slice(0, 200) : 'null'; } catch (e) { doc = 'threw ' + e.name; }
      let script;
      try { script = f.contentWindow.document.title; } catch (e) { script = 'threw ' + e.name; }
      done({ doc, script });
    };
    document.body.append(f);
  });
  document.body.dataset.result = JSON.stringify(out);
})();
`

type probeOut struct {
	Framed               bool              `json:"framed"`
	ParentLocalStorage   string            `json:"parentLocalStorage"`
	ParentSessionStorage string            `json:"parentSessionStorage"`
	ParentCookie         string            `json:"parentCookie"`
	ParentDocument       string            `json:"parentDocument"`
	OwnLocalStorage      string            `json:"ownLocalStorage"`
	OwnSessionStorage    string            `json:"ownSessionStorage"`
	Cookie               string            `json:"cookie"`
	Opener               string            `json:"opener"`
	TopNavigation        string            `json:"topNavigation"`
	APIGetCredentials    string            `json:"apiGetCredentials"`
	APIPostJSON          string            `json:"apiPostJSON"`
	APIPostSimple        string            `json:"apiPostSimple"`
	VictimFetch          string            `json:"victimFetch"`
	VictimScript         string            `json:"victimScript"`
	FrameDashboard       map[string]string `json:"frameDashboard"`
}

func writeSite(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "site")
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHostileSiteIsolated: a hostile site, published with `reportctl
// upload DIR` to the real daemon with a token, runs its probe inside the
// dashboard's frame and in a tab of its own opened from the dashboard's
// "open in new tab" link. The dashboard holds markers in its
// localStorage and cookie and the API token where it keeps it
// (sessionStorage 'reportd.token'); another report (the victim) was
// opened first, so the browser holds that report's cookie. The probe
// must get none of the markers, the token or the victim's files, must not
// change anything through the API, must not navigate the dashboard's tab,
// and must not get the dashboard into a frame of its own (the
// dashboard's frame-ancestors 'none' and X-Frame-Options DENY).
func TestHostileSiteIsolated(t *testing.T) {
	d := startSiteDaemon(t)
	const (
		secret      = "victim-secret-5c1f0e"
		localMarker = "dash-local-marker-81f2"
		cookieMark  = "dash-cookie-marker-93ad"
	)
	victim := d.publish(t, writeSite(t, map[string]string{
		"index.html": "<!DOCTYPE html><title>victim</title><p>victim report</p>\n",
		"secret.txt": secret + "\n",
		"secret.js":  "window.victimSecret = '" + secret + "';\n",
	}))
	cfg, _ := json.Marshal(map[string]any{"api": d.base, "victim": origin(t, victim.SiteURL), "victimId": victim.ID})
	hostile := d.publish(t, writeSite(t, map[string]string{
		"index.html": "<!DOCTYPE html><title>hostile</title><body><p>hostile report</p><script src=\"config.js\"></script><script src=\"probe.js\"></script></body>\n",
		"config.js":  "window.cfg = " + string(cfg) + ";\n",
		"probe.js":   hostileProbe,
	}))

	t.Log("the dashboard refuses to be framed")
	res, err := http.Get(d.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || res.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("dashboard headers: CSP %q, X-Frame-Options %q", csp, res.Header.Get("X-Frame-Options"))
	}

	b := startBrowser(t)
	t.Log("the victim report, opened in the tab: its cookie is set, its files readable on its own origin")
	b.do(chromedp.Navigate(victim.SiteURL))
	if got := poll[string](b, "the victim's secret on its own origin", `fetch('secret.txt').then((r) => r.text())`, 30*time.Second); strings.TrimSpace(got) != secret {
		t.Fatalf("the victim's own fetch of secret.txt: %q", got)
	}
	victimHost := strings.TrimPrefix(origin(t, victim.SiteURL), "http://")
	victimHost = victimHost[:strings.LastIndex(victimHost, ":")]
	cctx, cancelC := context.WithTimeout(b.ctx, 30*time.Second)
	cookies, err := chromedp.Call(cctx, network.GetCookies, network.GetCookiesParams{URLs: []string{origin(t, victim.SiteURL) + "/"}})
	cancelC()
	if err != nil {
		t.Fatal(err)
	}
	if len(cookies.Cookies) == 0 {
		t.Fatal("the browser holds no cookie of the victim's origin: the cross-report checks below would prove nothing")
	}
	for _, c := range cookies.Cookies {
		// Chromium writes a Domain cookie's domain with a leading dot.
		if c.Domain != victimHost || !c.HTTPOnly {
			t.Errorf("the victim's cookie %s: domain %q (want host-only %q), httpOnly %v", c.Name, c.Domain, victimHost, c.HTTPOnly)
		}
	}

	t.Log("the dashboard, with the token where it keeps it and markers")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", d.base, hostile.ID)))
	eval[bool](b, fmt.Sprintf(`(() => {
		sessionStorage.setItem('reportd.token', %s);
		localStorage.setItem('marker', %s);
		document.cookie = 'marker=%s; path=/';
		return true;
	})()`, jsString(d.token), jsString(localMarker), cookieMark))
	b.do(chromedp.Reload())
	b.waitText("#token-btn", "API token set")
	dashURL := eval[string](b, `location.href`)
	framed := probeResult(t, inFrame[string](b, "iframe.frame-site", "the hostile probe in the dashboard's frame", `document.body?.dataset.result`))
	if !framed.Framed {
		t.Fatalf("the probe did not run in a frame: %+v", framed)
	}
	secrets := []string{d.token, localMarker, cookieMark, secret}
	checkProbe(t, "in the dashboard's frame", framed, secrets)
	for k, v := range map[string]string{"parent.localStorage": framed.ParentLocalStorage, "parent.sessionStorage": framed.ParentSessionStorage,
		"parent.document.cookie": framed.ParentCookie, "parent.document": framed.ParentDocument, "top.location": framed.TopNavigation} {
		if v != "threw SecurityError" {
			t.Errorf("in the dashboard's frame, %s: %q (want a SecurityError)", k, v)
		}
	}
	if now := eval[string](b, `location.href`); now != dashURL {
		t.Errorf("the framed site moved the dashboard from %s to %s", dashURL, now)
	}
	if got := eval[string](b, `sessionStorage.getItem('reportd.token') + ' ' + localStorage.getItem('marker')`); got != d.token+" "+localMarker {
		t.Errorf("the dashboard's own storage: %q", got)
	}

	t.Log("its own tab, opened from the dashboard's link")
	opened := chromedp.WaitNewTarget(b.ctx, func(info *target.Info) bool { return strings.HasPrefix(info.URL, origin(t, hostile.SiteURL)) })
	b.click("#open-site")
	var id target.ID
	select {
	case id = <-opened:
	case <-time.After(30 * time.Second):
		t.Fatal("the site's own tab did not open")
	}
	tabCtx, cancelTab := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id))
	defer cancelTab()
	tab := &browser{ctx: tabCtx, t: t}
	own := probeResult(t, poll[string](tab, "the hostile probe in its own tab", `document.body?.dataset.result`, 45*time.Second))
	if own.Framed || own.Opener != "null" {
		t.Errorf("own tab: framed %v, window.opener %q (want null: the link is rel=noopener)", own.Framed, own.Opener)
	}
	checkProbe(t, "in its own tab", own, secrets)

	t.Log("the frame the site made of the dashboard holds no dashboard")
	// Chromium commits an error page in a frame whose response refuses
	// to be framed: read the frame's own document through CDP, as the
	// test (not the site) can, in the first tab.
	cancelTab()
	victimLoads := watchLoads(t, b, origin(t, victim.SiteURL))
	b.do(chromedp.Navigate(hostile.SiteURL))
	checkProbe(t, "top level", probeResult(t, poll[string](b, "the hostile probe, top level", `document.body?.dataset.result`, 45*time.Second)), secrets)
	t.Log("what Chromium says of the loads from the victim's origin")
	loads := victimLoads()
	for _, f := range []string{"/secret.txt", "/secret.js"} {
		if loads[f] == "" {
			t.Errorf("no load of the victim's %s seen", f)
		}
	}
	if !strings.Contains(loads["/secret.js"], "blocked corp-not-same-origin") {
		t.Errorf("the victim's secret.js as a script from the hostile origin: %q, want blocked by Cross-Origin-Resource-Policy", loads["/secret.js"])
	}
	if !strings.Contains(loads["/secret.txt"], "cors ") {
		t.Errorf("the victim's secret.txt fetched from the hostile origin: %q, want a CORS failure", loads["/secret.txt"])
	}
	inDash, err := pollFrame[string](b, "iframe#dash", `location.href + ' | dashboard DOM: ' + !!document.querySelector('#token-btn, main')`)
	t.Logf("the dashboard frame's document, read through CDP: %q (%v)", inDash, err)
	if err != nil || !strings.HasPrefix(inDash, "chrome-error://") || !strings.HasSuffix(inDash, "false") {
		t.Errorf("the site's frame of the dashboard holds %q (%v), want Chromium's error page", inDash, err)
	}

	t.Log("nothing changed through the API")
	req, _ := http.NewRequest("GET", d.base+"/api/projects", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var projects []struct{ Name string }
	if err := json.NewDecoder(res.Body).Decode(&projects); err != nil || len(projects) != 1 || projects[0].Name != "sites" {
		t.Errorf("projects after the probe: %+v (%v); want only \"sites\"", projects, err)
	}
}

func probeResult(t *testing.T, raw string) probeOut {
	t.Helper()
	var p probeOut
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("probe result %q: %v", raw, err)
	}
	t.Logf("probe: %s", raw)
	return p
}

// checkProbe fails on what the probe must never get, wherever it ran.
func checkProbe(t *testing.T, where string, p probeOut, secrets []string) {
	t.Helper()
	raw, _ := json.Marshal(p)
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Errorf("%s the hostile site read %q: %s", where, s, raw)
		}
	}
	for k, v := range map[string]string{"API GET with credentials": p.APIGetCredentials, "API POST (JSON) with credentials": p.APIPostJSON,
		"API POST (simple request) with credentials": p.APIPostSimple, "the victim's secret.txt with credentials": p.VictimFetch} {
		if !strings.HasPrefix(v, "failed ") {
			t.Errorf("%s, %s: %q (want a failed fetch)", where, k, v)
		}
	}
	if p.VictimScript != "blocked" {
		t.Errorf("%s, the victim's secret.js as a script: %q (want blocked by Cross-Origin-Resource-Policy)", where, p.VictimScript)
	}
	if fd := p.FrameDashboard; fd["doc"] != "null" || fd["script"] != "threw SecurityError" {
		t.Errorf("%s, the dashboard in the site's frame: %v", where, fd)
	}
}

// watchLoads records, from now on, the tab's requests to origin: per
// path, the response status and why loading failed (a blocked reason, a
// CORS error). The returned function gives what was seen so far.
func watchLoads(t *testing.T, b *browser, origin string) func() map[string]string {
	t.Helper()
	var mu sync.Mutex
	paths := map[network.RequestID]string{}
	seen := map[string]string{}
	ctx, cancel := context.WithCancel(b.ctx)
	t.Cleanup(cancel)
	note := func(id network.RequestID, s string) {
		if p, ok := paths[id]; ok {
			seen[p] = strings.TrimSpace(seen[p] + " " + s)
		}
	}
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(ev.Request.URL); err == nil && u.Scheme+"://"+u.Host == origin {
				paths[ev.RequestID] = u.Path
				seen[u.Path] += ""
			}
		case *network.EventResponseReceived:
			note(ev.RequestID, fmt.Sprintf("status %d", ev.Response.Status))
		case *network.EventLoadingFailed:
			s := "failed " + ev.ErrorText
			if ev.BlockedReason != "" {
				s += " blocked " + string(ev.BlockedReason)
			}
			if ev.CorsErrorStatus != nil {
				s += " cors " + string(ev.CorsErrorStatus.CorsError)
			}
			note(ev.RequestID, s)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]string{}
		for k, v := range seen {
			out[k] = v
		}
		t.Logf("loads from %s: %v", origin, out)
		return out
	}
}
