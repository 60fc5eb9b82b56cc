// Package idempotency keeps the Idempotency-Key of uploads: the first
// answer to a key is stored with the fingerprint of its request, so that a
// client retrying after a lost response gets that answer again instead of
// publishing twice. The records live in the metadata store (bbolt bucket,
// PostgreSQL table shared by replicas) for TTL.
package idempotency

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// TTL is how long a key is remembered.
const TTL = 24 * time.Hour

// Lease is how long a claimed key whose request never finished (its
// daemon died between claim and answer) keeps others waiting; after it
// the key may be claimed again.
const Lease = 10 * time.Minute

// MaxKeyLen bounds a key (bytes).
const MaxKeyLen = 255

// Record is one key's state.
type Record struct {
	Key         string
	Fingerprint string    // of the request that claimed it
	Done        bool      // false: in flight
	Status      int       // the first answer, once done
	Body        []byte    //
	Created     time.Time // when it was claimed (UTC)
}

// Store keeps the records (boltstore, pgstore). Claim is atomic: of two
// callers racing for a key, one claims it and the other gets its record.
type Store interface {
	// ClaimIdempotencyKey claims rec.Key for rec (Done false) unless a
	// record of it exists that was created after expired, or, while in
	// flight, after stale; it returns that record and false then.
	ClaimIdempotencyKey(ctx context.Context, rec Record, expired, stale time.Time) (Record, bool, error)
	// FinishIdempotencyKey stores the answer of a claimed key.
	FinishIdempotencyKey(ctx context.Context, key string, status int, body []byte) error
	// ReleaseIdempotencyKey forgets a claimed key whose request failed,
	// so that a retry runs it again.
	ReleaseIdempotencyKey(ctx context.Context, key string) error
	// SweepIdempotencyKeys deletes the records created before t.
	SweepIdempotencyKeys(ctx context.Context, before time.Time) (int, error)
}

// Keys applies TTL and Lease to a Store and sweeps expired records at
// most once an hour, from the requests that use it.
type Keys struct {
	Store Store
	Now   func() time.Time // default time.Now

	mu        sync.Mutex
	lastSweep time.Time
}

func (k *Keys) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// Claim claims key for a request of fingerprint fp: claimed true, or the
// record that holds it.
func (k *Keys) Claim(ctx context.Context, key, fp string) (Record, bool, error) {
	now := k.now().UTC()
	k.maybeSweep(ctx, now)
	return k.Store.ClaimIdempotencyKey(ctx, Record{Key: key, Fingerprint: fp, Created: now}, now.Add(-TTL), now.Add(-Lease))
}

func (k *Keys) maybeSweep(ctx context.Context, now time.Time) {
	k.mu.Lock()
	due := now.Sub(k.lastSweep) >= time.Hour
	if due {
		k.lastSweep = now
	}
	k.mu.Unlock()
	if due {
		k.Store.SweepIdempotencyKeys(ctx, now.Add(-TTL)) // best effort: a claim treats expired records as absent anyway
	}
}

// CheckKey validates an Idempotency-Key header value: 1 to MaxKeyLen
// visible ASCII characters.
func CheckKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("Idempotency-Key must be 1 to %d characters", MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return fmt.Errorf("Idempotency-Key must be visible ASCII characters (byte %d is not)", i)
		}
	}
	return nil
}
