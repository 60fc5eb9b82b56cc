package tokens

import (
	"crypto/subtle"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Store keeps token records (boltstore and pgstore implement it).
type Store interface {
	PutToken(Record) error
	Tokens() ([]Record, error)
	// AddTokenProject adds project to token id's projects in one atomic
	// step (no lost update when two creations race, on one process or on
	// replicas sharing the store); adding one it has is a no-op.
	// report.NotFound when there is no such token.
	AddTokenProject(id string, project int64) error
}

// Set is every token, held in memory and written through to the store:
// checking a request costs a map lookup and one SHA-256, no disk.
// With bbolt only the process that holds the store changes it (bbolt's
// lock), so the copy in memory never goes stale. A store shared by several
// processes (PostgreSQL: replicas, `reportd token` beside them) is re-read
// with Reload, which the daemon calls periodically.
type Set struct {
	store Store
	now   func() time.Time

	// wmu orders the writers (Create, Revoke) and Reload, so a reload
	// that read the store before a write cannot put back the map from
	// before it.
	wmu  sync.Mutex
	mu   sync.RWMutex
	byID map[string]Record
	live int // records not revoked: Enabled is asked on every request

	// missReload is when Covers last re-read the store for a project a
	// creating token did not cover: at most once a second, so a token
	// naming foreign projects cannot make every request scan the table.
	missMu     sync.Mutex
	missReload time.Time
}

// Load reads every token from store.
func Load(store Store) (*Set, error) {
	recs, err := store.Tokens()
	if err != nil {
		return nil, err
	}
	s := &Set{store: store, now: time.Now, byID: make(map[string]Record, len(recs))}
	for _, r := range recs {
		s.byID[r.ID] = r
		if r.RevokedAt == nil {
			s.live++
		}
	}
	return s, nil
}

// Reload re-reads every token from the store: tokens created or revoked
// by another process take effect here. Last-use times seen in this process
// are kept when they are newer than the stored ones.
func (s *Set) Reload() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.reload()
}

func (s *Set) reload() error {
	recs, err := s.store.Tokens()
	if err != nil {
		return err
	}
	byID := make(map[string]Record, len(recs))
	live := 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		if old, ok := s.byID[r.ID]; ok && old.LastUsed != nil && (r.LastUsed == nil || old.LastUsed.After(*r.LastUsed)) {
			r.LastUsed = old.LastUsed
		}
		byID[r.ID] = r
		if r.RevokedAt == nil {
			live++
		}
	}
	s.byID, s.live = byID, live
	return nil
}

// SetClock replaces the clock (tests).
func (s *Set) SetClock(now func() time.Time) { s.now = now }

// Enabled reports whether any token has not been revoked: then the API
// asks for a token as it does with auth.token. An expired token still
// counts (expiry must not reopen the API); revoking the last one does
// reopen it, and `reportd token revoke` says so.
func (s *Set) Enabled() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live > 0
}

// Authenticate checks a presented bearer secret. Every failure is an
// UnauthorizedError; the reason (expired, revoked) is given only to a
// caller who presented the right secret.
func (s *Set) Authenticate(secret string) (Principal, error) {
	id, hash, ok := parseSecret(secret)
	if !ok {
		return Principal{}, report.Errorf(report.Unauthorized, "the bearer token is not valid")
	}
	s.mu.RLock()
	r, found := s.byID[id]
	s.mu.RUnlock()
	if !found {
		// Compare anyway, so an unknown id costs what a known one does.
		subtle.ConstantTimeCompare(hash, make([]byte, len(hash)))
		return Principal{}, report.Errorf(report.Unauthorized, "the bearer token is not valid")
	}
	if subtle.ConstantTimeCompare(hash, r.Hash) != 1 {
		return Principal{}, report.Errorf(report.Unauthorized, "the bearer token is not valid")
	}
	now := s.now()
	switch {
	case r.RevokedAt != nil:
		return Principal{}, report.Errorf(report.Unauthorized, "token %s was revoked on %s", r.ID, r.RevokedAt.UTC().Format(time.RFC3339))
	case r.ExpiresAt != nil && !now.Before(*r.ExpiresAt):
		return Principal{}, report.Errorf(report.Unauthorized, "token %s expired on %s", r.ID, r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	s.touch(id, now)
	return Principal{ID: r.ID, Scope: r.Scope, Projects: r.Projects, Creates: r.CreateProjects, Prefix: r.ProjectPrefix}, nil
}

// touch records the last use in memory only (a write per request would
// cost an fsync); lists from the running daemon show it, it is not kept
// across restarts.
func (s *Set) touch(id string, now time.Time) {
	s.mu.Lock()
	if r, ok := s.byID[id]; ok && (r.LastUsed == nil || now.Sub(*r.LastUsed) > time.Second) {
		t := now.UTC()
		r.LastUsed = &t
		s.byID[id] = r
	}
	s.mu.Unlock()
}

// Spec is what creating a token asks for.
type Spec struct {
	Name     string        `json:"name"`
	Scope    Scope         `json:"scope"`
	Projects []int64       `json:"projects"`
	Expires  time.Duration `json:"-"` // 0: never
	// CreateProjects and ProjectPrefix: see Token.
	CreateProjects bool   `json:"createProjects"`
	ProjectPrefix  string `json:"projectPrefix"`
}

// Create makes a token and returns it with its secret, which exists only
// in this return value: the store keeps the digest.
func (s *Set) Create(sp Spec) (Token, string, error) {
	if _, ok := scopeNames[sp.Scope]; !ok {
		return Token{}, "", report.Errorf(report.Validation, "scope must be read, upload or admin")
	}
	if sp.Scope == Admin && len(sp.Projects) > 0 {
		return Token{}, "", report.Errorf(report.Validation, "an admin token is global: it cannot be limited to projects")
	}
	if len(sp.Name) > 200 || strings.ContainsFunc(sp.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Token{}, "", report.Errorf(report.Validation, "name must be at most 200 characters without control characters")
	}
	for _, p := range sp.Projects {
		if p <= 0 {
			return Token{}, "", report.Errorf(report.Validation, "project ids are positive, not %d", p)
		}
	}
	if sp.Expires < 0 {
		return Token{}, "", report.Errorf(report.Validation, "expiry must be positive")
	}
	if sp.CreateProjects && sp.Scope != Upload {
		return Token{}, "", report.Errorf(report.Validation, "only an upload token is given the right to create projects (--allow-create-projects): an admin token has it anyway, a read token cannot have it")
	}
	if sp.ProjectPrefix != "" && !sp.CreateProjects {
		return Token{}, "", report.Errorf(report.Validation, "a project prefix (--project-prefix) limits the projects a token creates: it needs the right to create projects (--allow-create-projects)")
	}
	if len(sp.ProjectPrefix) > 200 || strings.ContainsFunc(sp.ProjectPrefix, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Token{}, "", report.Errorf(report.Validation, "the project prefix must be at most 200 characters without control characters")
	}
	id, secret, hash := newSecret()
	now := s.now().UTC().Truncate(time.Second)
	projects := slices.Clone(sp.Projects)
	slices.Sort(projects)
	projects = slices.Compact(projects)
	if projects == nil {
		projects = []int64{}
	}
	t := Token{ID: id, Name: sp.Name, Scope: sp.Scope, Projects: projects, CreateProjects: sp.CreateProjects,
		ProjectPrefix: sp.ProjectPrefix, CreatedAt: now}
	if sp.Expires > 0 {
		e := now.Add(sp.Expires)
		t.ExpiresAt = &e
	}
	rec := Record{Token: t, Hash: hash}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.store.PutToken(rec); err != nil {
		return Token{}, "", err
	}
	s.mu.Lock()
	s.byID[id] = rec
	s.live++
	s.mu.Unlock()
	return t, secret, nil
}

// List returns every token, oldest first.
func (s *Set) List() []Token {
	s.mu.RLock()
	out := make([]Token, 0, len(s.byID))
	for _, r := range s.byID {
		out = append(out, r.Token)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Token) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for i := range out {
		if out[i].Projects == nil {
			out[i].Projects = []int64{}
		}
	}
	return out
}

// Revoke marks a token revoked; the row stays, so the token's holder is
// told it was revoked and lists show when. Revoking twice is a no-op.
// The set is read again first: the token may be unknown here yet (another
// process created it on a shared store), or have been given projects
// since (AddProject there), which writing the row back must not drop.
func (s *Set) Revoke(id string) (Token, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.reload(); err != nil {
		return Token{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return Token{}, report.Errorf(report.NotFound, "token %s not found", id)
	}
	if r.RevokedAt != nil {
		return r.Token, nil
	}
	now := s.now().UTC().Truncate(time.Second)
	r.RevokedAt = &now
	if err := s.store.PutToken(r); err != nil {
		return Token{}, err
	}
	s.byID[id] = r
	s.live--
	return r.Token, nil
}

// AddProject makes project one of token id's projects: the token created
// it. The store changes first, in one atomic step, then this set.
func (s *Set) AddProject(id string, project int64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.store.AddTokenProject(id, project); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.byID[id]; ok && !slices.Contains(r.Projects, project) {
		ps := append(slices.Clone(r.Projects), project)
		slices.Sort(ps)
		r.Projects = ps
		s.byID[id] = r
	}
	return nil
}

// Covers reports whether token id may act on project now. A token that
// creates projects may have been given one by another process sharing the
// store (a replica) since this set last read it: on a miss the set is read
// again once.
func (s *Set) Covers(id string, project int64) bool {
	has := func() bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		r, ok := s.byID[id]
		return ok && slices.Contains(r.Projects, project)
	}
	if has() {
		return true
	}
	s.mu.RLock()
	r, ok := s.byID[id]
	s.mu.RUnlock()
	if !ok || !r.CreateProjects {
		return false
	}
	s.missMu.Lock()
	if time.Since(s.missReload) < time.Second {
		s.missMu.Unlock()
		return false
	}
	s.missReload = time.Now()
	s.missMu.Unlock()
	if err := s.Reload(); err != nil {
		return false
	}
	return has()
}

// ValidID reports whether v is a token id's shape (tok_ and 16 hex digits).
func ValidID(v string) bool {
	h, ok := strings.CutPrefix(v, idPrefix)
	return ok && len(h) == 2*idBytes && strings.Trim(h, "0123456789abcdef") == ""
}
