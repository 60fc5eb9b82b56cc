package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
)

// allowedHosts is the Host allow-list beyond the loopback names: the
// configured names, public_url's host, and the listen address when it is
// a specific IP (a wildcard such as 0.0.0.0 adds nothing).
func allowedHosts(c *config.Config, ln net.Addr) []string {
	var hosts []string
	for _, h := range c.AllowedHosts {
		hosts = append(hosts, strings.TrimSpace(h))
	}
	if u, err := url.Parse(c.PublicURL); err == nil && u.Host != "" {
		hosts = append(hosts, u.Hostname())
	}
	if ap, err := netip.ParseAddrPort(ln.String()); err == nil && !ap.Addr().IsUnspecified() {
		hosts = append(hosts, ap.Addr().String())
	}
	return hosts
}

// loopbackOnly reports whether a listener is reachable only from this host:
// a unix socket or a loopback IP.
func loopbackOnly(a net.Addr) bool {
	if a.Network() == "unix" {
		return true
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// checkExposure refuses to serve beyond loopback with no token unless
// auth.anonymous says that is meant, and says in the log what is exposed.
// A live scoped token (reportd token create) counts as a token.
func checkExposure(c config.Config, ln net.Addr, log *slog.Logger, scoped bool) error {
	if err := checkTokenStrength(c, ln, "listen on", log); err != nil {
		return err
	}
	if loopbackOnly(ln) || c.Auth.Token != "" || scoped {
		return nil
	}
	if !c.Auth.Anonymous {
		return fmt.Errorf("refusing to listen on %s without a token: anyone who can reach it could read, change and delete every report. "+
			"Set auth.token (REPORTD_AUTH_TOKEN) or create a token (reportd token create --scope admin), listen on 127.0.0.1 behind a reverse proxy, "+
			"or set auth.anonymous: true (REPORTD_AUTH_ANONYMOUS=true) to serve without authentication on purpose", ln)
	}
	log.Warn("serving without authentication beyond loopback (auth.anonymous: true): anyone who can reach this address can read, upload, change and delete every project and report",
		"addr", ln.String(), "allowed_hosts", allowedHosts(&c, ln))
	return nil
}

// minTokenLen is the shortest auth.token served beyond loopback: a token
// that short could be guessed (24 characters of openssl rand -base64 are
// 144 bits; a word or a name is not).
const minTokenLen = 24

// checkTokenStrength refuses an auth.token shorter than minTokenLen on a
// listener beyond loopback and warns about it on loopback, saying how to
// make a strong one. what names the listener in the refusal ("listen on").
func checkTokenStrength(c config.Config, ln net.Addr, what string, log *slog.Logger) error {
	n := len(c.Auth.Token)
	if n == 0 || n >= minTokenLen {
		return nil
	}
	if !loopbackOnly(ln) {
		return fmt.Errorf("refusing to %s %s with an auth.token of %d characters: a token shorter than %d characters can be guessed. "+
			"Make a strong one with openssl rand -base64 32 and set it as auth.token (REPORTD_AUTH_TOKEN)", what, ln, n, minTokenLen)
	}
	log.Warn(fmt.Sprintf("auth.token is only %d characters: a token shorter than %d characters can be guessed, and reportd refuses it beyond loopback; "+
		"make a strong one with openssl rand -base64 32", n, minTokenLen), "addr", ln.String())
	return nil
}

// notePublicURL warns when reportd listens beyond loopback without
// public_url: links it hands out (dashboardUrl, redirects) then follow each
// request's Host and scheme, which behind a TLS proxy is not what users open.
func notePublicURL(c config.Config, ln net.Addr, log *slog.Logger) {
	if c.PublicURL != "" || loopbackOnly(ln) {
		return
	}
	log.Warn("public_url is not set: report links (dashboardUrl) are built from each request's Host as http://; "+
		"behind a proxy or with TLS set public_url (REPORTD_PUBLIC_URL) to the address users open", "addr", ln.String())
}

// pace is the request-body pacing from config.
func pace(c *config.Config) httpapi.Pace {
	return httpapi.Pace{MinRate: int64(c.UploadMinRate), Grace: c.UploadRateGrace, Idle: c.UploadIdleTimeout}
}
