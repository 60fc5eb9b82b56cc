package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
)

// SameSecret compares digests, so neither the length nor the content of
// the secret leaks through timing.
func SameSecret(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
