// Package tokens is reportd's scoped API tokens: what a token may do
// (scope and projects), how its secret looks, and how it is checked.
//
// A token's secret is 32 random bytes, shown once at creation as
// rpt_<id>_<secret>. The id (public: it appears in lists and logs) finds
// the row without a scan; the row holds only SHA-256 of the secret, and the
// digests are compared in constant time. The secret has 256 bits of
// entropy, so a fast hash is enough: there is nothing to brute-force.
package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scope orders what a token may do: read < upload < admin.
type Scope int

const (
	// Read: GET/HEAD of projects and reports (its projects, if limited).
	Read Scope = 1
	// Upload: Read, plus POST /api/reports into its projects.
	Upload Scope = 2
	// Admin: everything, token management and backups included.
	Admin Scope = 3
)

var scopeNames = map[Scope]string{Read: "read", Upload: "upload", Admin: "admin"}

func (s Scope) String() string {
	if n, ok := scopeNames[s]; ok {
		return n
	}
	return fmt.Sprintf("scope(%d)", int(s))
}

// ParseScope reads "read", "upload" or "admin".
func ParseScope(v string) (Scope, error) {
	for s, n := range scopeNames {
		if strings.EqualFold(v, n) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("scope must be read, upload or admin, not %q", v)
}

func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *Scope) UnmarshalText(b []byte) error {
	v, err := ParseScope(string(b))
	*s = v
	return err
}

// Token is what may be shown about a token: never its secret or hash.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Scope     Scope      `json:"scope"`
	Projects  []int64    `json:"projects"` // empty: every project, unless CreateProjects
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt"`
	LastUsed  *time.Time `json:"lastUsed"`

	// CreateProjects: an upload token that may create projects (whose
	// names start with ProjectPrefix when it is set); each project it
	// creates joins Projects. Such a token is limited to Projects even
	// while that is empty. Stored as JSON in bbolt, where an absent field
	// (a token made before these existed) reads as false and "".
	CreateProjects bool   `json:"createProjects"`
	ProjectPrefix  string `json:"projectPrefix"`
}

// Record is a token as stored: the token and the SHA-256 of its secret.
type Record struct {
	Token
	Hash []byte `json:"hash"`
}

// Live reports whether the token can still authenticate at now.
func (t Token) Live(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// Principal is who a request acts as once its bearer token checked out.
type Principal struct {
	ID       string // token id, or "auth.token" for the configured token
	Scope    Scope
	Projects []int64 // empty: every project, unless Creates
	// Creates: the token may create projects (Token.CreateProjects),
	// whose names start with Prefix when it is not empty.
	Creates bool
	Prefix  string
}

// Global reports whether the principal is not limited to projects. A
// token that creates projects is limited to its set, even an empty one.
func (p Principal) Global() bool { return len(p.Projects) == 0 && !p.Creates }

// MayName reports whether a project the principal creates may have name.
func (p Principal) MayName(name string) bool { return strings.HasPrefix(name, p.Prefix) }

// Covers reports whether the principal may act on project.
func (p Principal) Covers(project int64) bool {
	return p.Global() || slices.Contains(p.Projects, project)
}

const (
	secretPrefix = "rpt_"
	idPrefix     = "tok_"
	idBytes      = 8
	secretBytes  = 32
)

// newSecret returns a fresh id, the secret to show once, and its digest.
func newSecret() (id, secret string, hash []byte) {
	var raw [idBytes]byte
	rand.Read(raw[:])
	hexID := hex.EncodeToString(raw[:])
	var s [secretBytes]byte
	rand.Read(s[:])
	sec := base64.RawURLEncoding.EncodeToString(s[:])
	sum := sha256.Sum256([]byte(sec))
	return idPrefix + hexID, secretPrefix + hexID + "_" + sec, sum[:]
}

// parseSecret splits rpt_<hexid>_<secret> into the token id and the
// digest of its secret part; ok is false for anything else.
func parseSecret(v string) (id string, hash []byte, ok bool) {
	rest, found := strings.CutPrefix(v, secretPrefix)
	if !found {
		return "", nil, false
	}
	hexID, sec, found := strings.Cut(rest, "_")
	if !found || len(hexID) != 2*idBytes || sec == "" {
		return "", nil, false
	}
	if _, err := hex.DecodeString(hexID); err != nil {
		return "", nil, false
	}
	sum := sha256.Sum256([]byte(sec))
	return idPrefix + hexID, sum[:], true
}

// LooksLikeToken reports whether v has the shape of a scoped token's secret.
func LooksLikeToken(v string) bool {
	_, _, ok := parseSecret(v)
	return ok
}

// ParseExpiry reads a lifetime: a Go duration ("12h", "90m") or a whole
// number of days ("90d"). Zero or negative is refused.
func ParseExpiry(v string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err != nil || fmt.Sprint(days) != n {
			return 0, fmt.Errorf("expiry %q: want a number of days (90d) or a duration (12h)", v)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("expiry %q: want a number of days (90d) or a duration (12h)", v)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("expiry %q must be positive", v)
	}
	return d, nil
}
