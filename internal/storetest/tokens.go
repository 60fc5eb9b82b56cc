package storetest

import (
	"reflect"
	"strings"
	"sync"
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
	t.Run("CreateProjects", func(t *testing.T) { tokensCreateProjects(t, open) })
}

// tokensCreateProjects: an upload token that may create projects keeps
// that right and its prefix across reopening, is limited to its (empty)
// set, and the projects it creates join the set with no lost update when
// two processes add at once; revoking it from a stale set keeps them.
func tokensCreateProjects(t *testing.T, open TokenOpener) {
	st, reopen := open(t)
	a, err := tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	tok, secret, err := a.Create(tokens.Spec{Name: "ci", Scope: tokens.Upload, CreateProjects: true, ProjectPrefix: "ci-"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Create(tokens.Spec{Scope: tokens.Read, CreateProjects: true}); !report.IsKind(err, report.Validation) {
		t.Errorf("a read token that creates projects: %v", err)
	}
	if _, _, err := a.Create(tokens.Spec{Scope: tokens.Upload, ProjectPrefix: "ci-"}); !report.IsKind(err, report.Validation) {
		t.Errorf("a prefix without --allow-create-projects: %v", err)
	}
	st = reopen()
	a, err = tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Authenticate(secret)
	if err != nil || !p.Creates || p.Prefix != "ci-" || p.Global() || len(p.Projects) != 0 {
		t.Fatalf("after reopening: %+v %v", p, err)
	}
	if !p.MayName("ci-api") || p.MayName("prod") {
		t.Errorf("prefix ci-: MayName(ci-api)=%v MayName(prod)=%v", p.MayName("ci-api"), p.MayName("prod"))
	}
	b, err := tokens.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	// Two processes add projects at once: every one is kept.
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		set := a
		if i%2 == 1 {
			set = b
		}
		wg.Go(func() { errs <- set.AddProject(tok.ID, int64(100+i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := a.AddProject(tok.ID, 100); err != nil { // again: a no-op
		t.Fatal(err)
	}
	if err := a.AddProject("tok_0000000000000000", 1); !report.IsKind(err, report.NotFound) {
		t.Errorf("adding to no such token: %v", err)
	}
	// b has not re-read a's additions; Covers reads again on a miss.
	if !b.Covers(tok.ID, 100) || b.Covers(tok.ID, 99) {
		t.Errorf("b.Covers: 100 %v, 99 %v", b.Covers(tok.ID, 100), b.Covers(tok.ID, 99))
	}
	if err := a.AddProject(tok.ID, 500); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Revoke(tok.ID); err != nil {
		t.Fatal(err)
	}
	c, err := tokens.Load(reopen())
	if err != nil {
		t.Fatal(err)
	}
	var got tokens.Token
	for _, x := range c.List() {
		if x.ID == tok.ID {
			got = x
		}
	}
	want := []int64{}
	for i := range n {
		want = append(want, int64(100+i))
	}
	want = append(want, 500)
	if !reflect.DeepEqual(got.Projects, want) || got.RevokedAt == nil || !got.CreateProjects || got.ProjectPrefix != "ci-" {
		t.Errorf("after concurrent additions and a revoke:\n got %+v\nwant projects %v, revoked", got, want)
	}
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
