package watch

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

func TestBackoffIsCapped(t *testing.T) {
	prev := time.Duration(0)
	for attempt := 1; attempt <= 30; attempt++ {
		d := backoff(time.Second, time.Minute, attempt)
		if d <= 0 || d > time.Minute {
			t.Fatalf("attempt %d: %v out of (0, 1m]", attempt, d)
		}
		if attempt <= 5 && d < prev/2 {
			t.Fatalf("attempt %d: %v shrank from %v", attempt, d, prev)
		}
		prev = d
	}
	if d := backoff(time.Second, time.Minute, 1); d < 800*time.Millisecond || d > 1200*time.Millisecond {
		t.Fatalf("first backoff %v, want about 1s", d)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want failure
	}{
		{exitcode.With(exitcode.Unreachable, errors.New("dial")), unreachable},
		{errors.New("connection refused"), unreachable},
		{report.Errorf(report.Validation, "bad"), rejected},
		{fmt.Errorf("wrapped: %w", report.Errorf(report.PayloadTooLarge, "big")), rejected},
		{report.Errorf(report.NotFound, "no project"), rejected},
		{report.Errorf(report.Storage, "disk"), transient},
		{report.Errorf(report.Unavailable, "busy"), transient},
		{report.Errorf(report.Unauthorized, "token"), unauthorized}, // ends the run: no retry fixes it
		{report.Errorf(report.Forbidden, "scope"), transient},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
