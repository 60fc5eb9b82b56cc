package boltstore

import (
	"context"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/idempotency"
)

// bucketIdempotency: Idempotency-Key -> JSON idemRow (storage version 7).
var bucketIdempotency = []byte("idempotency")

type idemRow struct {
	Fingerprint string    `json:"fp"`
	Done        bool      `json:"done"`
	Status      int       `json:"status,omitempty"`
	Body        []byte    `json:"body,omitempty"`
	Created     time.Time `json:"created"`
}

var _ idempotency.Store = (*Store)(nil)

func (r idemRow) record(key string) idempotency.Record {
	return idempotency.Record{Key: key, Fingerprint: r.Fingerprint, Done: r.Done, Status: r.Status, Body: r.Body, Created: r.Created.UTC()}
}

// ClaimIdempotencyKey claims a key in one write transaction.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, rec idempotency.Record, expired, stale time.Time) (idempotency.Record, bool, error) {
	var (
		held    idempotency.Record
		claimed bool
	)
	// In the upload's path: committed with the writes of other requests
	// (groupcommit.go), so fn may run again and sets both results each time.
	err := s.writes.do(func(tx *bolt.Tx) error {
		held, claimed = idempotency.Record{}, false
		b := tx.Bucket(bucketIdempotency)
		if v := b.Get([]byte(rec.Key)); v != nil {
			var r idemRow
			if err := json.Unmarshal(v, &r); err == nil && r.Created.After(expired) && (r.Done || r.Created.After(stale)) {
				held = r.record(rec.Key)
				return nil
			}
		}
		claimed = true
		v, err := json.Marshal(idemRow{Fingerprint: rec.Fingerprint, Created: rec.Created.UTC()})
		if err != nil {
			return err
		}
		return b.Put([]byte(rec.Key), v)
	})
	return held, claimed, storageErr(err)
}

// FinishIdempotencyKey stores a claimed key's answer.
func (s *Store) FinishIdempotencyKey(ctx context.Context, key string, status int, body []byte) error {
	return storageErr(s.writes.do(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIdempotency)
		var r idemRow
		if v := b.Get([]byte(key)); v == nil || json.Unmarshal(v, &r) != nil {
			return nil // swept or released meanwhile: nothing to finish
		}
		r.Done, r.Status, r.Body = true, status, body
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), v)
	}))
}

// ReleaseIdempotencyKey deletes a key that is still in flight.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, key string) error {
	return storageErr(s.writes.do(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIdempotency)
		var r idemRow
		if v := b.Get([]byte(key)); v != nil && json.Unmarshal(v, &r) == nil && !r.Done {
			return b.Delete([]byte(key))
		}
		return nil
	}))
}

// SweepIdempotencyKeys deletes the records created before t.
func (s *Store) SweepIdempotencyKeys(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketIdempotency).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var r idemRow
			if json.Unmarshal(v, &r) != nil || r.Created.Before(before) {
				if err := c.Delete(); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	return n, storageErr(err)
}
