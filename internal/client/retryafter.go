package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// retryAfterError is an API error whose response said how long to wait
// before trying again (Retry-After): reportd sends it with a 503
// ServiceUnavailableError (its database or bucket is down, its conversion
// queue full), as proxies do with 503 and 429.
type retryAfterError struct {
	err   *report.Error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// withRetryAfter attaches h's Retry-After (delay-seconds or an HTTP date)
// to err, if there is one.
func withRetryAfter(err *report.Error, h http.Header) error {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return err
	}
	var d time.Duration
	if n, perr := strconv.Atoi(v); perr == nil && n >= 0 {
		d = time.Duration(n) * time.Second
	} else if t, perr := http.ParseTime(v); perr == nil {
		d = time.Until(t)
	}
	if d <= 0 {
		return err
	}
	return &retryAfterError{err: err, after: d}
}

// waitFor is the wait before the next attempt: the backoff, or longer when
// the server asked for it, but never past RetryMaxWait (a server cannot
// stall a client beyond what the user allowed).
func (c *Client) waitFor(attempt int, err error) time.Duration {
	wait := c.backoff(attempt)
	if ra, ok := err.(*retryAfterError); ok {
		wait = max(wait, min(ra.after, c.opts.RetryMaxWait))
	}
	return wait
}
