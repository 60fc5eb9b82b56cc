package prfeedback

import (
	"net/http"
	"strconv"
	"time"
)

// Retry bounds the retries of the forge APIs: rate limits (429, or 403
// with Retry-After or X-RateLimit-Remaining: 0) and 5xx answers and
// connection errors are retried Retries times; a wait is what the server
// asks for (Retry-After, X-RateLimit-Reset / RateLimit-Reset), else a
// doubling backoff from Wait, and never more than MaxWait.
type Retry struct {
	Retries       int
	Wait, MaxWait time.Duration
}

// DefaultRetry: 4 retries, 1 s doubling, a rate limit's wait up to 60 s.
var DefaultRetry = Retry{Retries: 4, Wait: time.Second, MaxWait: 60 * time.Second}

func (r Retry) norm() Retry {
	if r.Retries < 0 {
		r.Retries = 0
	}
	if r.Wait <= 0 {
		r.Wait = DefaultRetry.Wait
	}
	if r.MaxWait < r.Wait {
		r.MaxWait = r.Wait
	}
	return r
}

// retryable says whether an answer is worth another attempt.
func retryable(resp *http.Response) bool {
	switch c := resp.StatusCode; {
	case c == http.StatusTooManyRequests:
		return true
	case c == http.StatusForbidden:
		return rateLimited(resp.Header)
	case c >= 500 && c != http.StatusNotImplemented:
		return true
	}
	return false
}

// rateLimited tells a rate-limit 403 (GitHub's primary and secondary
// limits) from one of missing permissions.
func rateLimited(h http.Header) bool {
	return h.Get("Retry-After") != "" || h.Get("X-RateLimit-Remaining") == "0"
}

// serverWait reads Retry-After (seconds or an HTTP date), else the reset
// time of an exhausted rate limit (X-RateLimit-Reset on GitHub,
// RateLimit-Reset on GitLab, both Unix seconds).
func serverWait(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil {
			return time.Duration(s) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return t.Sub(now), true
		}
	}
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if v := h.Get(k); v != "" {
			if s, err := strconv.ParseInt(v, 10, 64); err == nil {
				return time.Unix(s, 0).Sub(now), true
			}
		}
	}
	return 0, false
}
