package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// sitesLock is the pg_advisory_lock key that keeps site GC from running
// while any daemon on this database ingests a site: ingests hold it
// shared, GC exclusive (internal/site's package comment says why).
// (0x7265706f72746473 is "reportds".)
const sitesLock int64 = 0x7265706f72746473

// LockSites takes the site lock across every daemon sharing the database,
// shared (an ingest) or exclusive (a GC), held until unlock. Each holder
// has a session of its own, outside the pool: an ingest holds its lock
// while it uses pooled connections (the id, the row), so locks taken from
// the pool could use it up and wait for themselves.
func (s *Store) LockSites(ctx context.Context, exclusive bool) (unlock func(), err error) {
	lock := "pg_advisory_lock_shared"
	if exclusive {
		lock = "pg_advisory_lock"
	}
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, storageErr(err)
	}
	if _, err := conn.Exec(ctx, "SELECT "+lock+"($1)", sitesLock); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, storageErr(err)
	}
	return func() { endSession(conn) }, nil
}
