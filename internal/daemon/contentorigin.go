package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/content"
	"github.com/reportd/reportd/internal/netguard"
)

// contentOrigin is the template and the extra host names the content
// origin answers, from content.url or, when it is empty, from where the
// content listener is bound: every report its own origin below
// {id}.localhost on loopback; beyond loopback the shared /r/{id}/
// fallback on the listener's host (wildcard DNS and TLS are the
// operator's to set up), said in the log.
func contentOrigin(c config.Config, api, ln net.Addr, log *slog.Logger) (tmpl string, extra []string) {
	port := "8081"
	if tcp, ok := ln.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
	}
	if !loopbackOnly(api) && loopbackOnly(ln) {
		log.Warn("the content origin listens on loopback only while the API does not: users on other machines cannot open report sites; "+
			"set content.addr (e.g. 0.0.0.0:8081) and content.url", "content_addr", ln.String())
	}
	switch {
	case c.Content.URL != "":
		tmpl = c.Content.URL
	case loopbackOnly(ln):
		return "http://{id}.localhost:" + port, nil
	default:
		host := ""
		if u, err := url.Parse(c.PublicURL); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		} else if ap, err := netip.ParseAddrPort(ln.String()); err == nil && !ap.Addr().IsUnspecified() {
			host = ap.Addr().Unmap().String()
		} else if h, err := os.Hostname(); err == nil && h != "" {
			host = strings.ToLower(h)
		} else {
			host = "localhost"
		}
		tmpl = "http://" + net.JoinHostPort(host, port)
		log.Warn("content.url is not set and the content origin listens beyond loopback: reports are served from one shared origin below /r/{id}/ "+
			"and are NOT isolated from each other (one report's scripts can read another's storage). For one origin per report, point a wildcard DNS name "+
			"(*.reports-content.example.com) and a wildcard TLS certificate at this listener through a proxy and set content.url to "+
			"https://{id}.reports-content.example.com (see docs/content-origin.md and examples/content-origin/)", "content_url", tmpl+"/r/{id}/")
	}
	if !strings.Contains(tmpl, "{id}") {
		if c.Content.URL != "" {
			log.Warn("content.url has no {id}: every report is served from one shared origin below /r/{id}/, so reports are NOT isolated from each other", "content_url", tmpl)
		}
		extra = append(allowedHosts(&c, api), "localhost", "127.0.0.1", "::1")
		if ap, err := netip.ParseAddrPort(ln.String()); err == nil && !ap.Addr().IsUnspecified() {
			extra = append(extra, ap.Addr().Unmap().String())
		}
	}
	return tmpl, extra
}

// frameAncestors are the dashboard's origins, which may frame reports:
// public_url's, and the API listener's as a browser on this machine names it.
// Only valid CSP host sources are listed: the grammar has no IPv6 literal
// (Chromium rejects "http://[::1]:8080" and logs it on every framed
// report), so a dashboard opened at an IPv6 address is not one of them.
func frameAncestors(c config.Config, api net.Addr) []string {
	var out []string
	if u, err := url.Parse(c.PublicURL); err == nil && u.Host != "" && cspHost(u.Hostname()) {
		out = append(out, u.Scheme+"://"+u.Host)
	}
	tcp, ok := api.(*net.TCPAddr)
	if !ok {
		return out
	}
	port := strconv.Itoa(tcp.Port)
	if tcp.IP == nil || tcp.IP.IsUnspecified() || tcp.IP.IsLoopback() {
		out = append(out, "http://localhost:"+port, "http://127.0.0.1:"+port)
	}
	if tcp.IP != nil && !tcp.IP.IsUnspecified() && !tcp.IP.IsLoopback() && cspHost(tcp.IP.String()) {
		out = append(out, "http://"+net.JoinHostPort(tcp.IP.String(), port))
	}
	return out
}

// cspHost says whether host is a host-part of a CSP source expression
// (CSP3 §2.3.1): labels of ASCII letters, digits and "-" joined by ".".
func cspHost(host string) bool {
	if host == "" {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// contentKeyFile held the secret content URLs were signed with when no
// auth.token was set, before the store kept the key; its links are
// accepted for one content.url_ttl after the switch, like the token's.
const contentKeyFile = "content.key"

// contentKeys are what content URLs are signed and checked with.
type contentKeys struct {
	secret      string    // signs and checks
	legacy      []string  // only check, until legacyUntil
	legacyUntil time.Time //
}

// contentSecret is content.signing_key, else the key the store keeps
// (made on first use; one for all replicas on PostgreSQL). Never
// auth.token: a signed siteUrl handed to readers would be an offline
// oracle for guessing it. What earlier releases signed with (a key derived
// from auth.token, or data_dir/content.key) is still accepted for one
// content.url_ttl after the store's key was made, then never.
func contentSecret(ctx context.Context, c config.Config, store content.KeyStore, log *slog.Logger) (contentKeys, error) {
	if c.Content.SigningKey != "" {
		return contentKeys{secret: c.Content.SigningKey}, nil
	}
	secret, made, err := store.ContentKey(ctx)
	if err != nil {
		return contentKeys{}, fmt.Errorf("content origin signing key: %w", err)
	}
	k := contentKeys{secret: secret, legacyUntil: made.Add(c.Content.URLTTL)}
	if c.Auth.Token != "" {
		k.legacy = append(k.legacy, c.Auth.Token)
	}
	b, err := os.ReadFile(filepath.Join(c.DataDir, contentKeyFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return contentKeys{}, fmt.Errorf("content origin key: %w", err)
	}
	if old := strings.TrimSpace(string(b)); len(old) >= 32 {
		k.legacy = append(k.legacy, old)
	}
	if len(k.legacy) > 0 && time.Now().Before(k.legacyUntil) {
		log.Info("content links signed before this release (with a key derived from auth.token or data_dir/content.key) are accepted until the new key is content.url_ttl old",
			"until", k.legacyUntil.Format(time.RFC3339))
	} else {
		k.legacy = nil
	}
	return k, nil
}

// openContent binds the content listener (the second socket systemd
// passed, if any) and builds its handler; the API's ContentURL hook is
// then the handler's Origins.URL. It does nothing when content.enabled is
// false.
func (m *Server) openContent(api net.Addr, passed net.Listener) error {
	c := m.Config
	if !c.Content.Enabled {
		if passed != nil {
			passed.Close()
		}
		return nil
	}
	var sites content.Sites = m.svc
	if m.Hooks.Sites != nil {
		sites = m.Hooks.Sites
	}
	ln := passed
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", c.Content.Addr); err != nil {
			return fmt.Errorf("content origin (content.addr): %w", err)
		}
	}
	if !loopbackOnly(ln.Addr()) {
		if err := checkTokenStrength(c, ln.Addr(), "serve the content origin on", m.Log); err != nil {
			ln.Close()
			return err
		}
	}
	if !loopbackOnly(ln.Addr()) && c.Auth.Token == "" && !m.tokens.Enabled() && !c.Auth.Anonymous {
		ln.Close()
		return fmt.Errorf("refusing to serve the content origin on %s without a token: anyone who can reach it could read every report site. "+
			"Set auth.token or create a token (reportd token create), keep content.addr on loopback behind a reverse proxy, "+
			"or set auth.anonymous: true to serve without authentication on purpose", ln.Addr())
	}
	tmpl, extra := contentOrigin(c, api, ln.Addr(), m.Log)
	ks, _ := m.store.(content.KeyStore) // both stores keep it (storetest.ContentKey)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	keys, err := contentSecret(ctx, c, ks, m.Log)
	cancel()
	if err != nil {
		ln.Close()
		return err
	}
	o, err := content.NewOrigins(content.Config{
		URL:            tmpl,
		ExtraHosts:     extra,
		FrameAncestors: frameAncestors(c, api),
		Secret:         keys.secret,
		Legacy:         keys.legacy,
		LegacyUntil:    keys.legacyUntil,
		APIURL:         apiURL(c, api),
		Protected:      m.readsProtected,
		URLTTL:         c.Content.URLTTL,
		SessionTTL:     c.Content.SessionTTL,
		Log:            m.Log,
	})
	if err != nil {
		ln.Close()
		return err
	}
	m.content, m.contentGuard = m.newHTTPServer(content.New(o, sites), "content")
	m.contentLn, m.origins = ln, o
	return nil
}

// apiURL is where clients find the API, as the content origin tells one
// that was pointed at it: public_url, else the API listener ("" on a unix
// socket).
func apiURL(c config.Config, api net.Addr) string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	if _, ok := api.(*net.TCPAddr); !ok {
		return ""
	}
	return "http://" + loopbackAddr(api.String())
}

// readsProtected tells whether reads need a token now: auth.reads, and a
// token to need (auth.token or a live scoped token). The content origin is
// protected exactly then, so the first token created for uploads changes
// nothing for readers: site links handed out while reads are open carry no
// signature and keep working.
func (m *Server) readsProtected() bool {
	return m.Config.Auth.Reads && (m.Config.Auth.Token != "" || m.tokens.Enabled())
}

// newHTTPServer is an http.Server with the daemon's timeouts and limits,
// and the guard of its listener (netguard.go): serve g.Listener(ln).
func (m *Server) newHTTPServer(h http.Handler, name string) (*http.Server, *netguard.Guard) {
	c := m.Config
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.HeaderTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
	g := netguard.New(guardOptions(&c, name, m.Log))
	g.Wire(srv)
	return srv, g
}

// ContentURL is the content origin's URL of a report's file (nil-safe:
// "" when the content origin is off).
func (m *Server) ContentURL(id int64, file string) string {
	if m.origins == nil {
		return ""
	}
	return m.origins.URL(id, file)
}

// ContentAddr is the content listener's address ("" when it is off).
func (m *Server) ContentAddr() string {
	if m.contentLn == nil {
		return ""
	}
	return m.contentLn.Addr().String()
}
