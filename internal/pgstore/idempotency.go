package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/idempotency"
)

var _ idempotency.Store = (*Store)(nil)

// ClaimIdempotencyKey inserts the claim, or takes over an expired or stale
// row, in one statement: of replicas racing, one gets the row back.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, rec idempotency.Record, expired, stale time.Time) (idempotency.Record, bool, error) {
	for {
		var claimed bool
		err := s.pool.QueryRow(ctx, `
			INSERT INTO idempotency_keys (key, fingerprint, done, status, body, created_at) VALUES ($1, $2, false, 0, NULL, $3)
			ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, done = false, status = 0, body = NULL, created_at = excluded.created_at
			WHERE idempotency_keys.created_at <= $4 OR (NOT idempotency_keys.done AND idempotency_keys.created_at <= $5)
			RETURNING true`, rec.Key, rec.Fingerprint, rec.Created.UTC(), expired.UTC(), stale.UTC()).Scan(&claimed)
		if err == nil {
			return idempotency.Record{}, true, nil
		}
		if err != pgx.ErrNoRows {
			return idempotency.Record{}, false, storageErr(err)
		}
		r := idempotency.Record{Key: rec.Key}
		err = s.pool.QueryRow(ctx, `SELECT fingerprint, done, status, body, created_at FROM idempotency_keys WHERE key = $1`, rec.Key).
			Scan(&r.Fingerprint, &r.Done, &r.Status, &r.Body, &r.Created)
		if err == pgx.ErrNoRows {
			continue // released or swept in between: claim again
		}
		r.Created = r.Created.UTC()
		return r, false, storageErr(err)
	}
}

// FinishIdempotencyKey stores a claimed key's answer.
func (s *Store) FinishIdempotencyKey(ctx context.Context, key string, status int, body []byte) error {
	_, err := s.pool.Exec(ctx, `UPDATE idempotency_keys SET done = true, status = $2, body = $3 WHERE key = $1`, key, status, body)
	return storageErr(err)
}

// ReleaseIdempotencyKey deletes a key that is still in flight.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE key = $1 AND NOT done`, key)
	return storageErr(err)
}

// SweepIdempotencyKeys deletes the records created before t.
func (s *Store) SweepIdempotencyKeys(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, before.UTC())
	return int(tag.RowsAffected()), storageErr(err)
}
