package pgstore

import (
	"context"
	"time"

	"github.com/reportd/reportd/internal/content"
)

var _ content.KeyStore = (*Store)(nil)

// ContentKey is the content signing key, made on first use: replicas
// racing to make it all end up with the one that was inserted first.
func (s *Store) ContentKey(ctx context.Context) (string, time.Time, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO content_keys (name, secret, made_at) VALUES ('content', $1, $2)
		ON CONFLICT (name) DO NOTHING`, content.NewKey(), s.clock.NowLocal().UTC()); err != nil {
		return "", time.Time{}, storageErr(err)
	}
	var (
		secret string
		made   time.Time
	)
	err := s.pool.QueryRow(ctx, `SELECT secret, made_at FROM content_keys WHERE name = 'content'`).Scan(&secret, &made)
	return secret, made.UTC(), storageErr(err)
}
