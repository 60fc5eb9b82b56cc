package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// UnreachableError means no attempt got an HTTP response: the server was
// down, refused the connection, or timed out, every time; or the first
// attempt failed in a way no retry can fix (Permanent says how).
type UnreachableError struct {
	Server   string
	Attempts int
	Err      error
	// Permanent, when set, is why the request was not retried: the host
	// name does not resolve or the TLS certificate does not verify.
	Permanent string
}

func (e *UnreachableError) Error() string {
	if e.Permanent != "" {
		return fmt.Sprintf("server %s unreachable, not retried: %s", e.Server, e.Permanent)
	}
	return fmt.Sprintf("server %s unreachable after %d attempt(s): %v", e.Server, e.Attempts, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// IsUnreachable reports whether err says the server could not be reached.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// errorBody is the API's error object (api-spec §7).
type errorBody struct {
	Error string `json:"error"`
	Type  string `json:"type"`
}

// decodeError turns a failed response into a *report.Error. The spec sends
// every error as 500, so the kind comes from the body's `type`; the status is
// only a fallback for bodies that are not the API's (a proxy's error page).
func decodeError(status int, body []byte) *report.Error {
	var b errorBody
	if json.Unmarshal(body, &b) == nil && b.Type != "" {
		msg := report.StripSpecStatusHint(strings.TrimPrefix(b.Error, b.Type+": "))
		if msg == "" {
			msg = http.StatusText(status)
		}
		return &report.Error{Kind: report.Kind(b.Type), Message: msg}
	}
	msg := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	if s := strings.TrimSpace(string(body)); s != "" && len(s) < 200 && !strings.ContainsAny(s, "<>") {
		msg += ": " + s
	}
	return &report.Error{Kind: kindOfStatus(status), Message: msg}
}

func kindOfStatus(status int) report.Kind {
	switch status {
	case http.StatusUnauthorized:
		return report.Unauthorized
	case http.StatusForbidden:
		return report.Forbidden
	case http.StatusNotFound:
		return report.NotFound
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return report.Validation
	case http.StatusRequestEntityTooLarge:
		return report.PayloadTooLarge
	case http.StatusMethodNotAllowed:
		return report.MethodNotAllowed
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return report.Unavailable
	}
	return report.Internal
}

// retryable says whether a server error may go away on its own. Kinds that
// describe the request (validation, not found, too large, conversion, auth)
// never do, whatever the status.
func retryable(k report.Kind) bool {
	switch k {
	case report.Storage, report.Unavailable, report.Internal:
		return true
	}
	return false
}
