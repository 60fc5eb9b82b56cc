package report

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is an error kind. Its string is the `type` of the API's error body
// and is part of the contract: never rename one.
type Kind string

const (
	NotFound        Kind = "NotFoundError"
	Validation      Kind = "ValidationError"
	PayloadTooLarge Kind = "PayloadTooLargeError"
	Conversion      Kind = "ConversionError"
	Unavailable     Kind = "ServiceUnavailableError"
	Storage         Kind = "StorageError"
	Unauthorized    Kind = "UnauthorizedError"
	// Forbidden: the bearer token is valid but its scope (or, on a route
	// about every project, its project limit) does not cover the request
	// (Unauthorized is for no, bad, expired or revoked tokens; a project
	// outside a limited token's is NotFound, as a missing one).
	Forbidden        Kind = "ForbiddenError"
	MethodNotAllowed Kind = "MethodNotAllowedError"
	// Conflict: an Idempotency-Key reused with another request, or whose
	// first request is still in flight.
	Conflict Kind = "ConflictError"
	Internal Kind = "InternalError"
)

// Kinds lists every kind, for documentation and the OpenAPI enum.
var Kinds = []Kind{NotFound, Validation, PayloadTooLarge, Conversion, Unavailable, Storage, Unauthorized, Forbidden, MethodNotAllowed, Conflict, Internal}

// Error is the one error type that crosses package boundaries. Message is
// safe to show to a client; Err carries internal detail for logs only.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return string(e.Kind) + ": " + e.Message + ": " + e.Err.Error()
	}
	return string(e.Kind) + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a client-facing error of the given kind.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap keeps err for the logs and shows only msg to clients.
func Wrap(k Kind, err error, msg string) *Error {
	return &Error{Kind: k, Message: msg, Err: err}
}

// KindOf returns the kind of err, Internal for errors of no known kind.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// MessageOf returns the client-facing message of err.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// IsKind reports whether err is of kind k.
func IsKind(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// specHintPrefix starts the note the API adds to an error message in spec
// mode (every error a 500): which setting gives the conventional status.
const specHintPrefix = " (HTTP 500 as the API spec says; error_status: conventional answers "

// SpecStatusHint is that note for an error whose conventional status is
// status.
func SpecStatusHint(status int) string {
	return fmt.Sprintf("%s%d)", specHintPrefix, status)
}

// StripSpecStatusHint removes the note from a message (reportctl knows
// the kind from the body and needs no status advice).
func StripSpecStatusHint(msg string) string {
	if i := strings.LastIndex(msg, specHintPrefix); i >= 0 && strings.HasSuffix(msg, ")") {
		return msg[:i]
	}
	return msg
}
