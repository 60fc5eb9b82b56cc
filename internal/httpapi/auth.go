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
	if !HasBearer(r, s.cfg.AuthToken) {
		return report.Errorf(report.Unauthorized, "a valid bearer token is required")
	}
	return nil
}

// HasBearer is the one bearer-token check, for the API and the admin
// routes alike: the scheme name is case-insensitive (RFC 7235 §2.1) and
// the token is compared in constant time. An empty want matches nothing.
func HasBearer(r *http.Request, want string) bool {
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && want != "" && strings.EqualFold(scheme, "Bearer") && SameSecret(got, want)
}

// SameSecret compares digests, so neither the length nor the content of
// the secret leaks through timing.
func SameSecret(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
