package pgstore

import (
	"context"
)

// sitesLock is the pg_advisory_lock key that keeps site GC from running
// while any daemon on this database ingests a site: ingests hold it
// shared, GC exclusive (internal/site's package comment says why).
// (0x7265706f72746473 is "reportds".)
const sitesLock int64 = 0x7265706f72746473

// LockSites takes the site lock across every daemon sharing the database,
// shared (an ingest) or exclusive (a GC), on a session of its own, held
// until unlock: so an ingest holds one pooled connection for its length.
func (s *Store) LockSites(ctx context.Context, exclusive bool) (unlock func(), err error) {
	lock, release := "pg_advisory_lock_shared", "pg_advisory_unlock_shared"
	if exclusive {
		lock, release = "pg_advisory_lock", "pg_advisory_unlock"
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, storageErr(err)
	}
	if _, err := conn.Exec(ctx, "SELECT "+lock+"($1)", sitesLock); err != nil {
		conn.Release()
		return nil, storageErr(err)
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		// On a broken connection the unlock fails, but the session ends
		// and takes the lock with it: drop the connection then.
		if _, err := conn.Exec(ctx, "SELECT "+release+"($1)", sitesLock); err != nil {
			conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}
