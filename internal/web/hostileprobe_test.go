package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
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
  out.apiGetVictim = await get(cfg.api + '/api/reports/' + cfg.victimId);
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
	APIGetVictim         string            `json:"apiGetVictim"`
	APIGetCredentials    string            `json:"apiGetCredentials"`
	APIPostJSON          string            `json:"apiPostJSON"`
	APIPostSimple        string            `json:"apiPostSimple"`
	VictimFetch          string            `json:"victimFetch"`
	VictimScript         string            `json:"victimScript"`
	FrameDashboard       map[string]string `json:"frameDashboard"`
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
