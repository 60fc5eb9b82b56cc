package content

import (
	"testing"
	"time"
)

// Legacy secrets check links and cookies until LegacyUntil and never
// after; nothing is signed with them.
func TestLegacyKeysWindow(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cfg := Config{URL: "http://{id}.localhost:8081", Secret: NewKey(), Legacy: []string{"old-auth-token-of-the-last-release"},
		LegacyUntil: now.Add(time.Hour), Protected: func() bool { return true }, Now: func() time.Time { return now }}
	o, err := NewOrigins(cfg)
	if err != nil {
		t.Fatal(err)
	}
	old := deriveKeys(cfg.Legacy[0])
	exp := now.Add(30 * time.Minute).Unix()
	if o.keys.sign(7, exp) == old.sign(7, exp) {
		t.Fatal("signed with the legacy key")
	}
	if !o.keys.verifyURL(7, exp, old.sign(7, exp)) {
		t.Error("a legacy link refused inside the window")
	}
	if _, ok := o.keys.verifySession(7, old.session(7, exp)); !ok {
		t.Error("a legacy cookie refused inside the window")
	}
	if o.keys.verifyURL(8, exp, old.sign(7, exp)) {
		t.Error("a legacy link of report 7 opens report 8")
	}
	now = now.Add(time.Hour)
	if o.keys.verifyURL(7, exp, old.sign(7, exp)) {
		t.Error("a legacy link accepted after the window")
	}
	if _, ok := o.keys.verifySession(7, old.session(7, exp)); ok {
		t.Error("a legacy cookie accepted after the window")
	}
	if !o.keys.verifyURL(7, exp, o.keys.sign(7, exp)) {
		t.Error("the current key's link refused")
	}
}
