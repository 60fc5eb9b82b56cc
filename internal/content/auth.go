package content

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/site"
)

// authorize lets a request through with a valid session cookie for id.
// A request carrying a signature is answered here: a valid one (or a
// valid cookie already) is redirected to the same URL without it, with
// a fresh cookie when the signature was valid; a bad one is refused.
// Without either: 401, or 403 for a cookie that is not valid for id.
// clean is the request's cleaned path.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, id int64, clean string) bool {
	now := h.cfg.Now()
	cookie, presented := h.session(r, id, now)
	q := r.URL.Query()
	if q.Has(paramSig) || q.Has(paramExp) {
		exp, err := strconv.ParseInt(q.Get(paramExp), 10, 64)
		signed := err == nil && now.Unix() < exp && h.o.keys.verifyURL(id, exp, q.Get(paramSig))
		if !signed && !cookie {
			page(w, r, http.StatusForbidden, "Link expired or invalid",
				"This link to the report has expired or is not valid for this report. Open the report again from the dashboard or the API to get a fresh link.")
			return false
		}
		if signed {
			h.setSession(w, id, now)
		}
		q.Del(paramSig)
		q.Del(paramExp)
		// The cleaned path: never "//host", which browsers would follow
		// to another site.
		target := site.EscapePath(clean)
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		w.Header().Set("Location", target)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusFound)
		return false
	}
	switch {
	case cookie:
		return true
	case presented:
		page(w, r, http.StatusForbidden, "Access denied",
			"Your session is not valid for this report (or has expired). Open the report again from the dashboard or the API to get a fresh link.")
	default:
		page(w, r, http.StatusUnauthorized, "Sign-in link needed",
			"This report is protected. Open it from the dashboard or through the link the API gives (siteUrl), which signs you in to this report.")
	}
	return false
}

// session tells whether r carries a valid, unexpired session cookie for
// id (ok), and whether it carries one at all (presented). Every cookie of
// the name is tried, so a sibling's planted cookie cannot shadow ours.
func (h *Handler) session(r *http.Request, id int64, now time.Time) (ok, presented bool) {
	for _, c := range r.CookiesNamed(h.cookieName()) {
		presented = true
		if exp, valid := h.o.keys.verifySession(id, c.Value); valid && now.Unix() < exp {
			return true, true
		}
	}
	return false, presented
}

// setSession sets the cookie of report id's session.
func (h *Handler) setSession(w http.ResponseWriter, id int64, now time.Time) {
	exp := now.Add(h.cfg.SessionTTL)
	c := &http.Cookie{
		Name:     h.cookieName(),
		Value:    h.o.keys.session(id, exp.Unix()),
		Path:     h.o.base(id),
		MaxAge:   int(h.cfg.SessionTTL / time.Second),
		Expires:  exp,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
	if h.secureCookies() {
		// The dashboard frames the report from another site: only a
		// SameSite=None cookie is sent with the frame's requests, and
		// Partitioned keeps it working where third-party cookies are
		// blocked (each embedding site gets its own, from its own link).
		c.Secure, c.SameSite, c.Partitioned = true, http.SameSiteNoneMode, true
	}
	http.SetCookie(w, c)
}

// cookieName: on a per-report origin with Secure cookies the __Host-
// prefix makes browsers refuse the cookie from anyone but that very host
// (no sibling report can plant one for a parent domain).
func (h *Handler) cookieName() string {
	if !h.o.shared && h.secureCookies() {
		return "__Host-" + cookieName
	}
	return cookieName
}

// secureCookies: https origins, and loopback ones, which browsers treat as
// secure contexts (they keep Secure cookies from http://*.localhost).
func (h *Handler) secureCookies() bool {
	if h.o.HTTPS() {
		return true
	}
	host := h.o.host
	if !h.o.shared {
		host = strings.TrimPrefix(h.o.suffix, ".")
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}
