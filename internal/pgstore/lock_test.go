package pgstore_test

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// A try-lock is held by one session at a time, across stores on the same
// database (replicas), and free again once unlocked.
func TestTryLock(t *testing.T) {
	dsn := testserver.DSN(t)
	a, b := open(t, dsn, report.Clock{}), open(t, dsn, report.Clock{})
	defer a.Close()
	defer b.Close()
	unlock, ok, err := a.TryLock(ctx, "pdf:x")
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if _, ok, err := b.TryLock(ctx, "pdf:x"); err != nil || ok {
		t.Fatalf("second replica took a held lock: %v %v", ok, err)
	}
	if _, ok, err := a.TryLock(ctx, "pdf:x"); err != nil || ok {
		t.Fatalf("the same replica took a held lock again: %v %v", ok, err)
	}
	other, ok, err := b.TryLock(ctx, "pdf:y")
	if err != nil || !ok {
		t.Fatalf("another name: %v %v", ok, err)
	}
	other()
	unlock()
	again, ok, err := b.TryLock(ctx, "pdf:x")
	if err != nil || !ok {
		t.Fatalf("after unlock: %v %v", ok, err)
	}
	again()
}
