package daemon

import (
	"crypto/rand"
	"encoding/hex"
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

	"github.com/reportd/reportd/internal/content"
	"github.com/reportd/reportd/internal/netguard"
)

// validateContent checks the content.* keys that one setting's kind cannot.
func (c *Config) validateContent() error {
	if !c.Content.Enabled {
		return nil
	}
	if c.Content.URLTTL <= 0 || c.Content.SessionTTL <= 0 {
		return fmt.Errorf("content.url_ttl and content.session_ttl must be positive")
	}
	if k := c.Content.SigningKey; k != "" && len(k) < 16 {
		return fmt.Errorf("content.signing_key must be at least 16 characters (e.g. openssl rand -hex 32)")
	}
	if c.Content.URL != "" {
		if _, err := content.NewOrigins(content.Config{URL: c.Content.URL}); err != nil {
			return err
		}
	}
	return nil
}

// contentOrigin is the template and the extra host names the content
// origin answers, from content.url or, when it is empty, from where the
// content listener is bound: every report its own origin below
// {id}.localhost on loopback; beyond loopback the shared /r/{id}/
// fallback on the listener's host (wildcard DNS and TLS are the
// operator's to set up), said in the log.
func contentOrigin(c Config, api, ln net.Addr, log *slog.Logger) (tmpl string, extra []string) {
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
		extra = append(c.allowedHosts(api), "localhost", "127.0.0.1", "::1")
		if ap, err := netip.ParseAddrPort(ln.String()); err == nil && !ap.Addr().IsUnspecified() {
			extra = append(extra, ap.Addr().Unmap().String())
		}
	}
	return tmpl, extra
}

// frameAncestors are the dashboard's origins, which may frame reports:
// public_url's, and the API listener's as a browser on this machine names it.
func frameAncestors(c Config, api net.Addr) []string {
	var out []string
	if u, err := url.Parse(c.PublicURL); err == nil && u.Host != "" {
		out = append(out, u.Scheme+"://"+u.Host)
	}
	tcp, ok := api.(*net.TCPAddr)
	if !ok {
		return out
	}
	port := strconv.Itoa(tcp.Port)
	if tcp.IP == nil || tcp.IP.IsUnspecified() || tcp.IP.IsLoopback() {
		out = append(out, "http://localhost:"+port, "http://127.0.0.1:"+port, "http://[::1]:"+port)
	}
	if tcp.IP != nil && !tcp.IP.IsUnspecified() && !tcp.IP.IsLoopback() {
		out = append(out, "http://"+net.JoinHostPort(tcp.IP.String(), port))
	}
	return out
}

// contentKeyFile holds the secret content URLs are signed with when no
// auth.token is set (scoped tokens only), so links survive restarts.
const contentKeyFile = "content.key"

// contentSecret is content.signing_key, else auth.token, else the data
// directory's content key, made on first use (one daemon's own: replicas
// sharing PostgreSQL's scoped tokens need content.signing_key).
func contentSecret(c Config, log *slog.Logger) (string, error) {
	if c.Content.SigningKey != "" {
		return c.Content.SigningKey, nil
	}
	if c.Auth.Token != "" {
		return c.Auth.Token, nil
	}
	if c.onPostgres() {
		log.Warn("content links are signed with a key of this daemon's own (data_dir/content.key): with several replicas and scoped tokens, " +
			"a link one replica hands out fails on another; set content.signing_key (REPORTD_CONTENT_SIGNING_KEY) to the same secret on every replica")
	}
	p := filepath.Join(c.DataDir, contentKeyFile)
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("content origin key: %w", err)
	}
	k := make([]byte, 32)
	rand.Read(k)
	secret := hex.EncodeToString(k)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("content origin key: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("content origin key: %w", err)
	}
	return secret, nil
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
	if !loopbackOnly(ln.Addr()) && c.Auth.Token == "" && !m.tokens.Enabled() && !c.Auth.Anonymous {
		ln.Close()
		return fmt.Errorf("refusing to serve the content origin on %s without a token: anyone who can reach it could read every report site. "+
			"Set auth.token or create a token (reportd token create), keep content.addr on loopback behind a reverse proxy, "+
			"or set auth.anonymous: true to serve without authentication on purpose", ln.Addr())
	}
	tmpl, extra := contentOrigin(c, api, ln.Addr(), m.Log)
	secret, err := contentSecret(c, m.Log)
	if err != nil {
		ln.Close()
		return err
	}
	o, err := content.NewOrigins(content.Config{
		URL:            tmpl,
		ExtraHosts:     extra,
		FrameAncestors: frameAncestors(c, api),
		Secret:         secret,
		Protected:      func() bool { return c.Auth.Token != "" || m.tokens.Enabled() },
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
	g := netguard.New(c.guardOptions(name, m.Log))
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
