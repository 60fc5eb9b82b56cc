package storetest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// TokenOpener opens an empty token store; reopen closes and reopens the
// same one (a restarted daemon).
type TokenOpener func(t *testing.T) (store tokens.Store, reopen func() tokens.Store)

// Tokens is the token store conformance suite (bbolt and PostgreSQL): the
// behaviour of internal/tokens on a real store, across reopening, and two
// sets on one store (two processes) seeing each other's changes by Reload.
func Tokens(t *testing.T, open TokenOpener) {
	t.Run("RoundTrip", func(t *testing.T) { tokensRoundTrip(t, open) })
	t.Run("TwoSetsOneStore", func(t *testing.T) { tokensShared(t, open) })
}

func tokensRoundTrip(t *testing.T, open TokenOpener) {
	st, reopen := open(t)
	set, err := tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	set.SetClock(func() time.Time { return now })
	up, upSecret, err := set.Create(tokens.Spec{Name: "ci upload", Scope: tokens.Upload, Projects: []int64{3, 1, 3}, Expires: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	adm, admSecret, err := set.Create(tokens.Spec{Name: "", Scope: tokens.Admin})
	if err != nil {
		t.Fatal(err)
	}
	rd, rdSecret, err := set.Create(tokens.Spec{Name: "reader", Scope: tokens.Read})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Revoke(rd.ID); err != nil {
		t.Fatal(err)
	}
	before := set.List()

	st = reopen()
	set, err = tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	set.SetClock(func() time.Time { return now.Add(time.Hour) })
	after := set.List()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("after reopening:\n got %+v\nwant %+v", after, before)
	}
	if !set.Enabled() {
		t.Fatal("live tokens, yet not enabled")
	}
	p, err := set.Authenticate(upSecret)
	if err != nil || p.ID != up.ID || p.Scope != tokens.Upload || !reflect.DeepEqual(p.Projects, []int64{1, 3}) {
		t.Fatalf("upload token: %+v %v", p, err)
	}
	if p, err := set.Authenticate(admSecret); err != nil || p.ID != adm.ID || !p.Global() {
		t.Fatalf("admin token: %+v %v", p, err)
	}
	if _, err := set.Authenticate(rdSecret); !report.IsKind(err, report.Unauthorized) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("revoked token: %v", err)
	}
	set.SetClock(func() time.Time { return now.Add(48 * time.Hour) })
	if _, err := set.Authenticate(upSecret); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired token: %v", err)
	}
}

func tokensShared(t *testing.T, open TokenOpener) {
	st, _ := open(t)
	a, err := tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	tok, secret, err := a.Create(tokens.Spec{Name: "made by a", Scope: tokens.Read})
	if err != nil {
		t.Fatal(err)
	}
	if b.Enabled() {
		t.Fatal("b sees a's token before reloading")
	}
	// Revoking a token another set made finds it (one reload).
	other, otherSecret, err := a.Create(tokens.Spec{Name: "revoked by b", Scope: tokens.Read})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Revoke(other.ID); err != nil {
		t.Fatalf("b revoking a's fresh token: %v", err)
	}
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(otherSecret); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a after b revoked its fresh token: %v", err)
	}
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if p, err := b.Authenticate(secret); err != nil || p.ID != tok.ID || !b.Enabled() {
		t.Fatalf("b after reload: %+v %v", p, err)
	}
	if _, err := b.Revoke(tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(secret); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a after b revoked: %v", err)
	}
	if a.Enabled() {
		t.Fatal("a still enabled after the only token was revoked")
	}
}
