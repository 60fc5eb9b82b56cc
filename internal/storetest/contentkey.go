package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/content"
)

// KeyOpener opens two handles on one fresh store (two replicas sharing
// PostgreSQL; on bbolt the one process's handle twice) and reopens it.
type KeyOpener func(t *testing.T) (a, b content.KeyStore, reopen func() content.KeyStore)

// ContentKey is the conformance suite of the content signing key: made on
// first use, random (64 hex digits), the same for every handle racing to
// make it, and kept with its making time across reopening.
func ContentKey(t *testing.T, open KeyOpener) {
	a, b, reopen := open(t)
	type got struct {
		secret string
		made   time.Time
		err    error
	}
	res := make([]got, 16)
	var wg sync.WaitGroup
	for i := range res {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, m, err := st.ContentKey(ctx)
			res[i] = got{s, m, err}
		}()
	}
	wg.Wait()
	first := res[0]
	if first.err != nil || len(first.secret) != 64 || first.made.IsZero() {
		t.Fatalf("ContentKey: %q %v %v", first.secret, first.made, first.err)
	}
	for i, r := range res {
		if r.err != nil || r.secret != first.secret || !r.made.Equal(first.made) {
			t.Fatalf("handle %d: %q %v %v, want the one key %q made %v", i%2, r.secret, r.made, r.err, first.secret, first.made)
		}
	}
	if d := time.Since(first.made); d < -time.Minute || d > time.Hour {
		t.Errorf("made %v, %v from now", first.made, d)
	}
	c := reopen()
	if s, m, err := c.ContentKey(ctx); err != nil || s != first.secret || !m.Equal(first.made) {
		t.Errorf("after reopening: %q %v %v, want %q %v", s, m, err, first.secret, first.made)
	}
	// Another store makes another key.
	other, _, _ := open(t)
	if s, _, err := other.ContentKey(ctx); err != nil || s == first.secret {
		t.Errorf("a second store: %q %v, want a key of its own", s, err)
	}
}
