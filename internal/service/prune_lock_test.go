package service

import (
	"context"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// While one prune deletes, another that would delete answers
// ServiceUnavailableError at once; a dry run goes ahead.
func TestRetentionOnePassAtATime(t *testing.T) {
	s, _ := newLocal(t, t.TempDir(), Config{Retention: report.Policy{KeepLast: 1}})
	ctx := context.Background()
	s.pruneMu.Lock() // a pass in progress
	if _, err := s.Prune(ctx, PruneRequest{}); !report.IsKind(err, report.Unavailable) {
		t.Fatalf("a second pass: %v, want ServiceUnavailableError", err)
	}
	if res, err := s.Prune(ctx, PruneRequest{DryRun: true}); err != nil || !res.DryRun {
		t.Fatalf("a dry run during a pass: %+v %v", res, err)
	}
	s.pruneMu.Unlock()
	if _, err := s.Prune(ctx, PruneRequest{}); err != nil {
		t.Fatalf("after the pass: %v", err)
	}
}
