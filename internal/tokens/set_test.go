package tokens

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

type memStore map[string]Record

func (m memStore) PutToken(r Record) error { m[r.ID] = r; return nil }
func (m memStore) AddTokenProject(id string, project int64) error {
	r, ok := m[id]
	if !ok {
		return report.Errorf(report.NotFound, "token %s not found", id)
	}
	r.Projects = append(slices.Clone(r.Projects), project)
	m[id] = r
	return nil
}
func (m memStore) Tokens() ([]Record, error) {
	var o []Record
	for _, r := range m {
		o = append(o, r)
	}
	return o, nil
}

func TestTokenLifecycle(t *testing.T) {
	st := memStore{}
	set, _ := Load(st)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	set.SetClock(func() time.Time { return now })
	if set.Enabled() {
		t.Fatal("enabled with no tokens")
	}
	tok, secret, err := set.Create(Spec{Name: "ci", Scope: Read, Expires: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "rpt_"+strings.TrimPrefix(tok.ID, "tok_")+"_") || !ValidID(tok.ID) {
		t.Fatalf("secret %q for id %q", secret, tok.ID)
	}
	if strings.Contains(string(st[tok.ID].Hash), secret) {
		t.Fatal("secret stored")
	}
	if p, err := set.Authenticate(secret); err != nil || p.Scope != Read {
		t.Fatalf("fresh token: %v %v", p, err)
	}
	for _, bad := range []string{"", "rpt_", secret + "x", strings.Replace(secret, "rpt_", "rpt_0", 1), "rpt_0000000000000000_abc"} {
		if _, err := set.Authenticate(bad); !report.IsKind(err, report.Unauthorized) || !strings.Contains(report.MessageOf(err), "not valid") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	now = now.Add(time.Hour)
	if _, err := set.Authenticate(secret); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired token: %v", err)
	}
	if !set.Enabled() {
		t.Fatal("an expired token must keep auth on")
	}
	if _, err := set.Revoke(tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Authenticate(secret); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("revoked token: %v", err)
	}
	if set.Enabled() {
		t.Fatal("enabled with only revoked tokens")
	}
	if _, err := set.Revoke("tok_0000000000000000"); !report.IsKind(err, report.NotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	if _, _, err := set.Create(Spec{Scope: Admin, Projects: []int64{1}}); !report.IsKind(err, report.Validation) {
		t.Fatalf("admin limited to projects: %v", err)
	}
}

func TestParseExpiry(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "12h": 12 * time.Hour, "1d": 24 * time.Hour} {
		if got, err := ParseExpiry(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0d", "-1h", "d", "1.5d", "x"} {
		if _, err := ParseExpiry(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// Requests check tokens while others are created and revoked (run with -race).
func TestSetConcurrent(t *testing.T) {
	set, _ := Load(newLockedStore())
	_, secret, _ := set.Create(Spec{Scope: Upload, Projects: []int64{1}})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if p, err := set.Authenticate(secret); err != nil || !p.Covers(1) || p.Covers(2) {
					t.Errorf("%+v %v", p, err)
					return
				}
				set.Enabled()
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			tok, _, _ := set.Create(Spec{Scope: Read})
			set.List()
			set.Revoke(tok.ID)
		}
	})
	wg.Wait()
	if !set.Enabled() || len(set.List()) != 51 {
		t.Fatalf("enabled %v, %d tokens", set.Enabled(), len(set.List()))
	}
}

type lockedStore struct {
	mu sync.Mutex
	m  memStore
}

func newLockedStore() *lockedStore { return &lockedStore{m: memStore{}} }

func (l *lockedStore) PutToken(r Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.PutToken(r)
}

func (l *lockedStore) Tokens() ([]Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.Tokens()
}

func (l *lockedStore) AddTokenProject(id string, project int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.AddTokenProject(id, project)
}
