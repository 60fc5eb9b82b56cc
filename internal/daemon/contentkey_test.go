package daemon

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
)

// tokenSig is the URL signature an earlier release made from auth.token:
// HKDF-SHA256 of the token, then HMAC of "id|exp". Written out here from
// the published scheme, as an attacker holding a siteUrl would.
func tokenSig(token string, id, exp int64) string {
	k, err := hkdf.Key(sha256.New, []byte(token), []byte("reportd content origin"), "url signature v1", 32)
	if err != nil {
		panic(err)
	}
	m := hmac.New(sha256.New, k)
	fmt.Fprintf(m, "%d|%d", id, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TestContentLinksNoTokenOracle: a siteUrl handed to a reader is signed
// with a key that has nothing to do with auth.token, so it cannot be used
// to test guesses of the token offline; links signed the old way (from
// the token) still open the report for one content.url_ttl after the
// upgrade, and no longer once the store's key is older than that.
func TestContentLinksNoTokenOracle(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterWindow=%v", after), func(t *testing.T) {
			c := testConfig(t, t.TempDir())
			c.Auth.Token = strongToken
			c.Auth.Reads = true // links are signed only while reads need a token
			if after {
				// This store switched to its own key two url_ttl ago.
				st, err := boltstore.Open(filepath.Join(c.DataDir, "reportd.db"), report.Clock{Now: func() time.Time { return time.Now().Add(-2 * c.Content.URLTTL) }})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := st.ContentKey(t.Context()); err != nil {
					t.Fatal(err)
				}
				st.Close()
			}
			sites := newStoreSites(t, 7, "index.html", "<p>seven</p>")
			s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true, Sites: sites}})
			u, err := url.Parse(s.ContentURL(7, ""))
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			exp, err := strconv.ParseInt(q.Get("reportd_exp"), 10, 64)
			if err != nil || q.Get("reportd_sig") == "" {
				t.Fatalf("siteUrl %s is not signed", u)
			}
			if q.Get("reportd_sig") == tokenSig(c.Auth.Token, 7, exp) {
				t.Fatalf("the signature is derived from auth.token: an offline oracle for guessing it")
			}
			cl := contentClient(t, s.ContentAddr())
			open := func(sig string) int {
				t.Helper()
				v := url.Values{"reportd_sig": {sig}, "reportd_exp": {strconv.FormatInt(exp, 10)}}
				res, err := cl.Get(u.Scheme + "://" + u.Host + "/?" + v.Encode())
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode
			}
			if st := open(q.Get("reportd_sig")); st != http.StatusFound {
				t.Errorf("the link handed out: %d, want 302", st)
			}
			want := http.StatusFound
			if after {
				want = http.StatusForbidden
			}
			if st := open(tokenSig(c.Auth.Token, 7, exp)); st != want {
				t.Errorf("a link signed the old way (from auth.token): %d, want %d", st, want)
			}
			if st := open(tokenSig("not-the-token-at-all-0123456789", 7, exp)); st != http.StatusForbidden {
				t.Errorf("a link signed with another secret: %d, want 403", st)
			}
		})
	}
}
