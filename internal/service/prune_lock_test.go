package service

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// While one prune deletes, another that would delete answers
// ServiceUnavailableError at once; a dry run goes ahead.
func TestRetentionOnePassAtATime(t *testing.T) {
	dir := t.TempDir()
	fd, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	store, err := boltstore.Open(filepath.Join(dir, "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := New(Config{Retention: report.Policy{KeepLast: 1}}, store, fd, nil)
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
