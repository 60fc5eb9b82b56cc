package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/idempotency"
)

// IdemOpener opens two handles on one fresh store (two replicas sharing
// PostgreSQL; on bbolt the one process's handle twice) and reopens it.
type IdemOpener func(t *testing.T) (a, b idempotency.Store, reopen func() idempotency.Store)

// Idempotency is the conformance suite of the Idempotency-Key records:
// one claim wins a race across handles, the answer is kept across
// reopening, in-flight claims go stale after the lease, records expire
// and are swept.
func Idempotency(t *testing.T, open IdemOpener) {
	a, b, reopen := open(t)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	claim := func(s idempotency.Store, key, fp string, at time.Time) (idempotency.Record, bool) {
		t.Helper()
		r, ok, err := s.ClaimIdempotencyKey(ctx, idempotency.Record{Key: key, Fingerprint: fp, Created: at}, at.Add(-idempotency.TTL), at.Add(-idempotency.Lease))
		if err != nil {
			t.Fatal(err)
		}
		return r, ok
	}

	// Sixteen claims of one key over both handles: exactly one wins, the
	// others see it in flight.
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		won int
	)
	for i := range 16 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok, err := s.ClaimIdempotencyKey(ctx, idempotency.Record{Key: "k1", Fingerprint: "fp1", Created: t0}, t0.Add(-idempotency.TTL), t0.Add(-idempotency.Lease))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("claim: %v", err)
			case ok:
				won++
			case r.Done || r.Fingerprint != "fp1" || !r.Created.Equal(t0):
				t.Errorf("held record %+v, want fp1 in flight since %v", r, t0)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d claims of one key won, want 1", won)
	}
	body := []byte(`{"id":7}`)
	if err := b.FinishIdempotencyKey(ctx, "k1", 201, body); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseIdempotencyKey(ctx, "k1"); err != nil { // done: not released
		t.Fatal(err)
	}
	a = reopen()
	r, ok := claim(a, "k1", "other", t0.Add(idempotency.TTL-time.Minute))
	if ok || !r.Done || r.Status != 201 || string(r.Body) != string(body) || r.Fingerprint != "fp1" {
		t.Fatalf("after finishing and reopening: %+v %v", r, ok)
	}
	// Expired: claimed afresh.
	if _, ok := claim(a, "k1", "fp2", t0.Add(idempotency.TTL+time.Minute)); !ok {
		t.Fatal("an expired key was not claimed again")
	}
	// In flight: held within the lease, claimable after it.
	claim(a, "k2", "fp", t0)
	if r, ok := claim(a, "k2", "fp", t0.Add(idempotency.Lease-time.Second)); ok || r.Done {
		t.Fatalf("in flight within the lease: %+v %v", r, ok)
	}
	if _, ok := claim(a, "k2", "fp", t0.Add(idempotency.Lease+time.Second)); !ok {
		t.Fatal("a stale in-flight key was not claimed again")
	}
	// Released: claimable at once.
	claim(a, "k3", "fp", t0)
	if err := a.ReleaseIdempotencyKey(ctx, "k3"); err != nil {
		t.Fatal(err)
	}
	if _, ok := claim(a, "k3", "fp", t0); !ok {
		t.Fatal("a released key was not claimed again")
	}
	// Sweep: what was created before the cut goes, the rest stays.
	claim(a, "old", "fp", t0.Add(-2*idempotency.TTL))
	n, err := a.SweepIdempotencyKeys(ctx, t0.Add(-idempotency.TTL))
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want 1", n, err)
	}
	if r, ok := claim(a, "k3", "fp", t0); ok || r.Fingerprint != "fp" {
		t.Fatalf("sweep took a live key: %+v %v", r, ok)
	}
}
