package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// authorize enforces the optional bearer token: always for changes, for
// reads only when configured. The health check stays open for probes.
func (s *Server) authorize(r *http.Request) error {
	if s.cfg.AuthToken == "" {
		return nil
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if read && (!s.cfg.AuthReads || r.URL.Path == "/api/reports/ping") {
		return nil
	}
	// The scheme name is case-insensitive (RFC 7235 §2.1).
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	// Compare digests so neither the length nor the content leaks through timing.
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.cfg.AuthToken))
	if !ok || subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return report.Errorf(report.Unauthorized, "a valid bearer token is required")
	}
	return nil
}
