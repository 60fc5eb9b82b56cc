package content

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/site"
)

// placeholder marks {id} while the template is parsed as a URL.
const placeholder = "reportd-id-placeholder"

// Origins maps report ids to their origins and back, and signs URLs.
type Origins struct {
	cfg    Config
	scheme string // http or https
	// Per-report origins: a report's host is prefix + id + suffix
	// (lower-case), port the template's (may be "").
	prefix, suffix string
	// Shared origin: host is the template's host; every report below /r/{id}/.
	shared bool
	host   string // lower-case host name, no port
	port   string
	hosts  map[string]bool // shared: names answered (template host, ExtraHosts)
	keys   signer
}

// NewOrigins checks cfg.URL and derives the signing keys.
func NewOrigins(cfg Config) (*Origins, error) {
	cfg = cfg.withDefaults()
	bad := func(why string) error {
		return fmt.Errorf("content.url %q: %s (want e.g. %s, https://{id}.reports-content.example.com or http://host:8081 for one shared origin)", cfg.URL, why, DefaultURL)
	}
	if strings.Count(cfg.URL, "{id}") > 1 {
		return nil, bad("{id} appears more than once")
	}
	u, err := url.Parse(strings.Replace(cfg.URL, "{id}", placeholder, 1))
	if err != nil {
		return nil, bad(err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, bad("not an http or https URL")
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, bad("want only scheme, host and port")
	}
	if u.Path != "" && u.Path != "/" {
		return nil, bad("a path is not supported (reports are served at the root of their origin, or below /r/{id}/)")
	}
	o := &Origins{cfg: cfg, scheme: u.Scheme, port: u.Port(), keys: newSigner(cfg)}
	host := strings.ToLower(u.Hostname())
	if i := strings.Index(host, placeholder); i >= 0 {
		o.prefix, o.suffix = host[:i], host[i+len(placeholder):]
		if strings.Contains(o.prefix, ".") || endsInDigit(o.prefix) || !strings.Contains(o.suffix, ".") || o.suffix[0] >= '0' && o.suffix[0] <= '9' {
			return nil, bad("{id} must be (part of) the first label of a host name, as in {id}.reports.example.com")
		}
		return o, nil
	}
	if strings.Contains(cfg.URL, "{id}") {
		return nil, bad("{id} may only appear in the host")
	}
	o.shared, o.host = true, host
	o.hosts = map[string]bool{host: true}
	for _, h := range cfg.ExtraHosts {
		o.hosts[strings.ToLower(strings.TrimSpace(h))] = true
	}
	return o, nil
}

// Shared tells whether every report shares one origin (the /r/{id}/ fallback).
func (o *Origins) Shared() bool { return o.shared }

// HTTPS tells whether the origins are https (cookies are Secure then).
func (o *Origins) HTTPS() bool { return o.scheme == "https" }

// Template is the configured template.
func (o *Origins) Template() string { return o.cfg.URL }

// origin is report id's origin, scheme://host[:port] without a slash.
func (o *Origins) origin(id int64) string {
	host := o.host
	if !o.shared {
		host = o.prefix + strconv.FormatInt(id, 10) + o.suffix
	}
	if o.port != "" {
		host = net.JoinHostPort(host, o.port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return o.scheme + "://" + host
}

// base is the path every file of report id is below ("/" or "/r/{id}/").
func (o *Origins) base(id int64) string {
	if o.shared {
		return "/r/" + strconv.FormatInt(id, 10) + "/"
	}
	return "/"
}

// URL is the absolute URL of file (a slash path inside the site; "" is
// its entry) of report id, signed when access is controlled.
func (o *Origins) URL(id int64, file string) string {
	var b strings.Builder
	b.WriteString(o.origin(id))
	b.WriteString(o.base(id))
	b.WriteString(site.EscapePath(strings.TrimPrefix(file, "/")))
	if o.cfg.Protected() {
		exp := o.expiry()
		b.WriteString("?" + paramSig + "=" + o.keys.sign(id, exp) + "&" + paramExp + "=" + strconv.FormatInt(exp, 10))
	}
	return b.String()
}

// expiry is a new signed URL's expiry: URLTTL from now, rounded up to the
// minute so URLs handed out close together are the same (and cacheable).
func (o *Origins) expiry() int64 {
	exp := o.cfg.Now().Add(o.cfg.URLTTL).Unix()
	return (exp + 59) / 60 * 60
}

// Resolve finds the report a request is for: by its Host on per-report
// origins, by its (clean) path's /r/{id}/ on the shared one. rest is the
// path inside the site ("" for its root); ok is false for a Host that is
// not a content origin or a path outside /r/{id}/. redirect is set when
// the path needs a trailing slash (/r/{id}) to keep relative links right.
func (o *Origins) Resolve(host, cleanPath string) (id int64, rest string, redirect bool, ok bool) {
	h := strings.ToLower(host)
	// Without a colon there is no port (and SplitHostPort's error would
	// cost an allocation per request).
	if strings.IndexByte(h, ':') >= 0 {
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
	}
	h = strings.TrimSuffix(h, ".")
	if !o.shared {
		if !strings.HasPrefix(h, o.prefix) || !strings.HasSuffix(h, o.suffix) || len(h) <= len(o.prefix)+len(o.suffix) {
			return 0, "", false, false
		}
		id, ok := parseID(h[len(o.prefix) : len(h)-len(o.suffix)])
		return id, strings.TrimPrefix(cleanPath, "/"), false, ok
	}
	if !o.sharedHost(strings.Trim(h, "[]")) {
		return 0, "", false, false
	}
	after, found := strings.CutPrefix(cleanPath, "/r/")
	if !found {
		return 0, "", false, false
	}
	num, rest, slash := strings.Cut(after, "/")
	id, ok = parseID(num)
	return id, rest, ok && !slash, ok
}

// ReportHost tells whether host (a Host header) is one report's own
// origin: always false for the shared origin, whose host is not a
// report's. The API refuses such hosts.
func (o *Origins) ReportHost(host string) bool {
	if o.shared {
		return false
	}
	_, _, _, ok := o.Resolve(host, "/")
	return ok
}

// sharedHost tells whether the shared origin answers host: the template's
// host or an extra one ("name", "*.domain", or "*" for any).
func (o *Origins) sharedHost(host string) bool {
	if o.hosts[host] || o.hosts["*"] {
		return true
	}
	for h := range o.hosts {
		if rest, ok := strings.CutPrefix(h, "*."); ok && strings.HasSuffix(host, "."+rest) {
			return true
		}
	}
	return false
}

func endsInDigit(s string) bool { return s != "" && s[len(s)-1] >= '0' && s[len(s)-1] <= '9' }

// parseID accepts a positive decimal id without sign or leading zeros,
// so every report has exactly one origin.
func parseID(s string) (int64, bool) {
	if s == "" || s[0] == '0' || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}
