package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/testbin"
)

// TestReplicasShareTheContentKey: two replicas with scoped tokens only
// (no auth.token, no content.signing_key) and auth.reads sign content links with the one
// key PostgreSQL keeps: a siteUrl one replica hands out opens the report
// on the other's content origin.
func TestReplicasShareTheContentKey(t *testing.T) {
	c := newCluster(t)
	cmd := testbin.Command(bins.Path(t, "reportd"), "token", "create", "--scope", "admin", "--name", "replicas")
	cmd.Env = append(cmd.Env, c.env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	token := strings.TrimSpace(string(out))
	// Links are signed while reads need a token (auth.reads).
	a, b := c.start("", "REPORTD_AUTH_READS=true"), c.start("", "REPORTD_AUTH_READS=true")
	call := func(method, u, ct string, body *strings.Reader) []byte {
		t.Helper()
		if body == nil {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, u, body)
		req.Header.Set("Authorization", "Bearer "+token)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s %s %v", method, u, resp.Status, raw, err)
		}
		return raw
	}
	var p project
	json.Unmarshal(call("POST", a.URL()+"/api/projects", "application/json", strings.NewReader(`{"name":"links"}`)), &p)
	ct, body := uploadBody(p.ID, "page.html", []byte("<!DOCTYPE html><title>page</title><p>shared key</p>"))
	var rep struct {
		ID      int64  `json:"id"`
		SiteURL string `json:"siteUrl"`
	}
	json.Unmarshal(call("POST", a.URL()+"/api/reports", ct, strings.NewReader(body.String())), &rep)
	var onB struct {
		SiteURL string `json:"siteUrl"`
	}
	json.Unmarshal(call("GET", fmt.Sprintf("%s/api/reports/%d", b.URL(), rep.ID), "", nil), &onB)
	ua, err := url.Parse(rep.SiteURL)
	if err != nil || ua.Query().Get("reportd_sig") == "" {
		t.Fatalf("siteUrl from A: %q", rep.SiteURL)
	}
	ub, err := url.Parse(onB.SiteURL)
	if err != nil || ub.Host == ua.Host {
		t.Fatalf("siteUrl from B: %q (A: %q)", onB.SiteURL, rep.SiteURL)
	}
	// A's link, presented to B's content origin.
	ub.RawQuery = ua.RawQuery
	// *.localhost is loopback (browsers resolve it so); dial B's listener.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+ub.Port())
	}}
	t.Cleanup(tr.CloseIdleConnections)
	noRedirect := &http.Client{Transport: tr, Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(ub.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || len(resp.Cookies()) != 1 {
		t.Fatalf("A's link on B's content origin: %s, cookies %q; want 302 and a session", resp.Status, resp.Header.Values("Set-Cookie"))
	}
}
