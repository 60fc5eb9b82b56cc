package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/badge"
	"github.com/reportd/reportd/internal/report"
)

// Badges configures /p/{project}[/{name}]/badge.svg and badge.json.
type Badges struct {
	Thresholds *badge.Thresholds // nil: badge.DefaultThresholds
	MaxAge     time.Duration     // Cache-Control max-age; zero: 60s
	Now        func() time.Time  // nil: time.Now
}

// maxBadgeLabel bounds ?label=: it is written into the badge several times.
const maxBadgeLabel = 100

// badge answers a badge link. A report that cannot be found (no report of
// that name, type or branch, an ambiguous project name) is still a badge,
// grey, with status 200, as shields.io does: a README shows it instead of
// a broken image until the first upload. A project that does not exist
// is a 404 error body (a typo in the link shows, rather than a badge that
// looks like a project waiting for reports); other failures (storage,
// auth) are the API's error body too. ?label= replaces the label.
func (s *Server) badge(w http.ResponseWriter, r *http.Request, l link) error {
	label := r.URL.Query().Get("label")
	if utf8.RuneCountInString(label) > maxBadgeLabel {
		return report.Errorf(report.Validation, "label is longer than %d characters", maxBadgeLabel)
	}
	b, err := s.badgeFor(r, l, label)
	if err != nil {
		return err
	}
	body, ctype := b.SVG(), "image/svg+xml; charset=utf-8"
	if l.action == badgeJSON {
		body, ctype = b.Endpoint(), "application/json; charset=utf-8"
	}
	s.writeBadge(w, r, body, ctype)
	return nil
}

// writeBadge answers a badge or trend body with its ETag, cache rules
// and a sandbox CSP (304 on a matching If-None-Match).
func (s *Server) writeBadge(w http.ResponseWriter, r *http.Request, body []byte, ctype string) {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", s.badgeCacheControl())
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func (s *Server) badgeFor(r *http.Request, l link, label string) (badge.Badge, error) {
	cfg := s.cfg.Badges
	id, err := s.linkProject(r, l)
	if report.IsKind(err, report.Validation) {
		return badge.Missing(label, "invalid link"), nil
	}
	if err != nil {
		return badge.Badge{}, err
	}
	rep, err := s.svc.Latest(r.Context(), report.LatestQuery{Project: id, Name: l.name, Type: l.typ, Branch: l.branch})
	switch {
	case report.IsKind(err, report.NotFound):
		return badge.Missing(label, "no report"), nil
	case report.IsKind(err, report.Validation):
		return badge.Missing(label, "invalid link"), nil
	case err != nil:
		return badge.Badge{}, err
	}
	th := badge.DefaultThresholds
	if cfg.Thresholds != nil {
		th = *cfg.Thresholds
	}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	return badge.For(rep, now(), th, label), nil
}

// badgeCacheControl lets browsers and shared caches (GitHub's image proxy)
// keep a badge briefly; with auth.reads only private caches may.
func (s *Server) badgeCacheControl() string {
	age := s.cfg.Badges.MaxAge
	if age <= 0 {
		age = time.Minute
	}
	scope := "public"
	if s.cfg.AuthReads && s.authOn() { // auth.token or scoped tokens
		scope = "private"
	}
	return scope + ", max-age=" + strconv.Itoa(int(age/time.Second))
}

// matchesETag reports whether an If-None-Match header names etag (weak
// or strong, or "*").
func matchesETag(header, etag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == etag || v == "*" {
			return true
		}
	}
	return false
}
