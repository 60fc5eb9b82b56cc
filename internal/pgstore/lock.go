package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5"
)

// lockKey maps a lock name onto the bigint of PostgreSQL's advisory locks.
// The names live in their own space ("reportd lock\x00" + name), apart from
// migrationLock.
func lockKey(name string) int64 {
	h := sha256.Sum256([]byte("reportd lock\x00" + name))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// TryLock takes the session advisory lock named name (pg_try_advisory_lock
// on a hash of it) without waiting, on a connection of its own outside the
// pool, so a long holder (a PDF conversion, a sweep) takes no connection
// from the queries. ok is false when another session, in this process or
// another replica, holds it. unlock releases the lock and closes the
// connection (endSession); a replica that dies releases it when PostgreSQL
// notices the session is gone.
func (s *Store) TryLock(ctx context.Context, name string) (unlock func(), ok bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, false, storageErr(err)
	}
	release := func() { endSession(conn) }
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", lockKey(name)).Scan(&ok); err != nil {
		release()
		return nil, false, storageErr(err)
	}
	if !ok {
		release()
		return nil, false, nil
	}
	return release, true, nil
}

// ContentKeys calls fn with the sha256 of every report's file, each once,
// in no particular order (the sweep keeps the PDFs of these contents).
func (s *Store) ContentKeys(ctx context.Context, fn func(sha string) error) error {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT sha256 FROM reports`)
	if err != nil {
		return storageErr(err)
	}
	defer rows.Close()
	var sha string
	_, err = pgx.ForEachRow(rows, []any{&sha}, func() error { return fn(sha) })
	return storageErr(err)
}

// endSession releases the advisory locks of a lock's own session, then
// closes it. The server frees a closed session's locks only once its
// backend notices the connection is gone, a moment later; unlocking first
// makes the lock free when unlock returns. If the unlock fails (the
// connection broke), closing still ends the session and its locks.
func endSession(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
	conn.Close(ctx)
}
