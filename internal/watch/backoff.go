package watch

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

// backoff is capped exponential with ±20% jitter, so that many files queued
// in one outage do not retry in lockstep.
func backoff(min, max time.Duration, attempt int) time.Duration {
	d := min
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min64(d, max)
	j := time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	return min64(j, max)
}

func min64(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// failure is how an upload error is handled.
type failure int

const (
	// unreachable: the server could not be reached. Everything waits for
	// a health probe to succeed; no file is charged an attempt.
	unreachable failure = iota
	// transient: the server answered but could not take the file now
	// (storage, conversion capacity, a token's scope being fixed). Retried with
	// backoff for as long as it takes.
	transient
	// rejected: the server refused this file (validation, too large, no
	// such project). Counts toward --max-attempts.
	rejected
	// unauthorized: the server wants a token it was not given (typically
	// its first token was just created) or refused the one given. No
	// retry can fix that: the run stops, files stay queued (auth.go).
	unauthorized
)

func classify(err error) failure {
	if exitcode.Of(err) == exitcode.Unreachable {
		return unreachable
	}
	var re *report.Error
	if !errors.As(err, &re) {
		// Not an API error body: the transport failed.
		return unreachable
	}
	switch re.Kind {
	case report.Validation, report.PayloadTooLarge, report.NotFound, report.MethodNotAllowed:
		return rejected
	case report.Unauthorized:
		return unauthorized
	}
	return transient
}
