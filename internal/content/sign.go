package content

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Query parameters of a signed URL and the session cookie's name.
const (
	paramSig   = "reportd_sig"
	paramExp   = "reportd_exp"
	cookieName = "reportd_content"
)

// keys are the two HMAC keys: one for URLs, one for cookies, so a
// cookie's MAC can never pass as a URL's or the other way round.
type keys struct {
	url, cookie []byte // nil: no secret, nothing verifies
}

// deriveKeys derives the keys from secret with HKDF-SHA256: every replica
// given the same secret derives the same keys.
func deriveKeys(secret string) keys {
	if secret == "" {
		return keys{}
	}
	derive := func(info string) []byte {
		k, err := hkdf.Key(sha256.New, []byte(secret), []byte("reportd content origin"), info, 32)
		if err != nil {
			panic(err) // only for lengths HKDF cannot make
		}
		return k
	}
	return keys{url: derive("url signature v1"), cookie: derive("session cookie v1")}
}

func mac(key []byte, id, exp int64) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strconv.FormatInt(id, 10) + "|" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func check(key []byte, id, exp int64, sig string) bool {
	if key == nil {
		return false
	}
	return hmac.Equal([]byte(mac(key, id, exp)), []byte(sig))
}

// KeyStore keeps the content signing key (boltstore, pgstore): made on
// first use, the same for every replica sharing the store, and when it
// was made (the switch from keys derived from auth.token).
type KeyStore interface {
	ContentKey(ctx context.Context) (secret string, made time.Time, err error)
}

// NewKey is a fresh random signing key: 32 bytes in hex.
func NewKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// signer checks signatures with its keys and, until legacyUntil, with
// legacy ones; it signs with keys only.
type signer struct {
	keys
	legacy      []keys
	legacyUntil time.Time
	now         func() time.Time
}

func newSigner(c Config) signer {
	s := signer{keys: deriveKeys(c.Secret), legacyUntil: c.LegacyUntil, now: c.Now}
	for _, l := range c.Legacy {
		if l != "" && l != c.Secret {
			s.legacy = append(s.legacy, deriveKeys(l))
		}
	}
	return s
}

// stillLegacy are the legacy keys while they are accepted.
func (s signer) stillLegacy() []keys {
	if len(s.legacy) == 0 || !s.now().Before(s.legacyUntil) {
		return nil
	}
	return s.legacy
}

func (s signer) verifyURL(id, exp int64, sig string) bool {
	if s.keys.verifyURL(id, exp, sig) {
		return true
	}
	for _, k := range s.stillLegacy() {
		if k.verifyURL(id, exp, sig) {
			return true
		}
	}
	return false
}

func (s signer) verifySession(id int64, v string) (int64, bool) {
	if exp, ok := s.keys.verifySession(id, v); ok {
		return exp, true
	}
	for _, k := range s.stillLegacy() {
		if exp, ok := k.verifySession(id, v); ok {
			return exp, true
		}
	}
	return 0, false
}

// sign is the URL signature of report id until exp (unix seconds).
func (k keys) sign(id, exp int64) string {
	if k.url == nil {
		return ""
	}
	return mac(k.url, id, exp)
}

// verifyURL checks a URL signature; the caller checks exp against the clock.
func (k keys) verifyURL(id, exp int64, sig string) bool { return check(k.url, id, exp, sig) }

// session is a cookie value for report id until exp: "<exp>.<mac>".
func (k keys) session(id, exp int64) string {
	return strconv.FormatInt(exp, 10) + "." + mac(k.cookie, id, exp)
}

// verifySession checks a cookie value for report id and returns its expiry.
func (k keys) verifySession(id int64, v string) (int64, bool) {
	e, sig, ok := strings.Cut(v, ".")
	if !ok {
		return 0, false
	}
	exp, err := strconv.ParseInt(e, 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != e {
		return 0, false
	}
	return exp, check(k.cookie, id, exp, sig)
}
