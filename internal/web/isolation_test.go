package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

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
//
// It runs with public reads (auth.reads false: the API answers anyone's
// GET, as it answers the hostile site's fetch without credentials) and
// with reads protected, where that fetch is refused too.
func TestHostileSiteIsolated(t *testing.T) {
	for _, reads := range []bool{false, true} {
		t.Run(fmt.Sprintf("auth.reads=%v", reads), func(t *testing.T) { hostileSite(t, reads) })
	}
}

func hostileSite(t *testing.T, reads bool) {
	d := startSiteDaemon(t, reads)
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
	t.Log("the victim report, opened in the tab: its cookie is set (with auth.reads), its files readable on its own origin")
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
	// With public reads the content origin is open too (no signed link,
	// no cookie); the cross-origin checks below hold all the same.
	if d.reads && len(cookies.Cookies) == 0 {
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

	t.Log("its page in the first tab, watched through CDP: the loads from the victim's origin, the frame it made of the dashboard")
	cancelTab()
	victimLoads := watchLoads(t, b, origin(t, victim.SiteURL))
	b.do(chromedp.Navigate(hostile.SiteURL))
	checkProbe(t, "top level", probeResult(t, poll[string](b, "the hostile probe, top level", `document.body?.dataset.result`, 45*time.Second)), secrets)
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
	// Chromium commits an error page in a frame whose response refuses
	// to be framed: read the frame's own document, as the test (not the
	// site) can.
	inDash, err := pollFrame[string](b, "iframe#dash", `location.href + ' | dashboard DOM: ' + !!document.querySelector('#token-btn, main')`)
	t.Logf("the dashboard frame's document, read through CDP: %q (%v)", inDash, err)
	if err != nil || !strings.HasPrefix(inDash, "chrome-error://") || !strings.HasSuffix(inDash, "false") {
		t.Errorf("the site's frame of the dashboard holds %q (%v), want Chromium's error page", inDash, err)
	}

	// (The status is the spec's 500 unless error_status is conventional.)
	if reads && !strings.Contains(framed.APIGetVictim, `"type":"UnauthorizedError"`) {
		t.Errorf("with auth.reads, the hostile site's GET of the victim report: %q, want an UnauthorizedError", framed.APIGetVictim)
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
