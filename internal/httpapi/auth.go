package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

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
