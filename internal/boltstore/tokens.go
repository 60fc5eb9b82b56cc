package boltstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// bucketTokens: token id ("tok_…") -> JSON tokens.Record. The record holds
// the SHA-256 of the token's secret, never the secret. Added in storage
// version 3 (tokensUpgrade). createProjects and projectPrefix came later
// without a step: a record without them decodes as false and "", which is
// what a token made before them is.
var bucketTokens = []byte("tokens")

// tokensUpgrade is the step from storage version 2 to 3: the tokens bucket
// (initSchema has created it with every other bucket by the time it runs).
func tokensUpgrade(tx *bolt.Tx) error {
	_, err := tx.CreateBucketIfNotExists(bucketTokens)
	return err
}

var _ tokens.Store = (*Store)(nil)

// PutToken writes one token record.
func (s *Store) PutToken(r tokens.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTokens).Put([]byte(r.ID), b)
	}))
}

// AddTokenProject adds project to a token's projects, reading and writing
// the record in one transaction (bbolt serialises them).
func (s *Store) AddTokenProject(id string, project int64) error {
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketTokens)
		v := bk.Get([]byte(id))
		if v == nil {
			return report.Errorf(report.NotFound, "token %s not found", id)
		}
		var r tokens.Record
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("token %q: %w", id, err)
		}
		if slices.Contains(r.Projects, project) {
			return nil
		}
		r.Projects = append(r.Projects, project)
		slices.Sort(r.Projects)
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return bk.Put([]byte(id), b)
	}))
}

// Tokens reads every token record.
func (s *Store) Tokens() ([]tokens.Record, error) {
	var out []tokens.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketTokens)
		if bk == nil { // an older store opened read-only: no tokens yet
			return nil
		}
		return bk.ForEach(func(k, v []byte) error {
			var r tokens.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("token %q: %w", k, err)
			}
			out = append(out, r)
			return nil
		})
	})
	return out, storageErr(err)
}

// OpenWait opens the store read-write like Open, but gives up after
// timeout with ErrLocked when another process (a running daemon) holds it.
func OpenWait(path string, clock report.Clock, timeout time.Duration) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Update(initSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return newStore(db, clock), nil
}
