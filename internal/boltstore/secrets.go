package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/content"
)

// bucketSecrets: name -> secret the daemon keeps (storage version 7).
// "content_key" is the content signing key: 8-byte big-endian unix
// seconds of when it was made, then the key's text.
var bucketSecrets = []byte("secrets")

var keyContentKey = []byte("content_key")

var _ content.KeyStore = (*Store)(nil)

// ContentKey is the content signing key, made on first use (in one
// write transaction: bbolt has one writer) and when.
func (s *Store) ContentKey(ctx context.Context) (string, time.Time, error) {
	var (
		secret string
		made   time.Time
	)
	read := func(v []byte) error {
		if len(v) < 8+32 {
			return fmt.Errorf("corrupt content key (%d bytes)", len(v))
		}
		made = time.Unix(int64(binary.BigEndian.Uint64(v)), 0).UTC()
		secret = string(v[8:])
		return nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketSecrets).Get(keyContentKey); v != nil {
			return read(v)
		}
		return nil
	})
	if err != nil || secret != "" {
		return secret, made, storageErr(err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSecrets)
		if v := b.Get(keyContentKey); v != nil {
			return read(v) // made meanwhile
		}
		secret, made = content.NewKey(), s.clock.NowLocal().UTC()
		return b.Put(keyContentKey, append(u64(uint64(made.Unix())), secret...))
	})
	return secret, made, storageErr(err)
}
