package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// testCtx bounds a test's waits generously (a loaded machine).
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// wantKind fails unless err is a *report.Error of kind k, and returns it.
func wantKind(t *testing.T, err error, k report.Kind) *report.Error {
	t.Helper()
	var re *report.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *report.Error", err, err)
	}
	if re.Kind != k {
		t.Fatalf("error kind %s, want %s: %v", re.Kind, k, err)
	}
	return re
}
