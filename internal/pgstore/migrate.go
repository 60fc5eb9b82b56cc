package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the pg_advisory_lock key under which migrations run, so
// that replicas starting together apply each one exactly once: the first
// applies, the others wait and then find nothing left to do.
// (0x7265706f72746400 is "reportd\0".)
const migrationLock int64 = 0x7265706f72746400

// Migration is one numbered schema step: migrations/NNNN_name.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists the embedded steps in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		b, err := migrationFiles.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Migrate brings the database's schema up to date: every embedded step
// not yet in schema_migrations runs in its own transaction, which also
// records it. It holds a session advisory lock throughout, so concurrent
// callers (replicas starting together) serialise; it returns the versions
// this call applied. A database newer than this binary (a version it does
// not know) is refused rather than written to.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (applied []int, err error) {
	steps, err := Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	defer func() {
		// On a broken connection the unlock fails, but the session ends
		// and takes the lock with it: drop the connection then.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock); uerr != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
			if err == nil {
				err = fmt.Errorf("migration unlock: %w", uerr)
			}
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("schema_migrations: %w", err)
	}
	rows, _ := conn.Query(ctx, "SELECT version FROM schema_migrations")
	done, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("schema_migrations: %w", err)
	}
	have := map[int]bool{}
	for _, v := range done {
		have[int(v)] = true
	}
	known := map[int]bool{}
	for _, m := range steps {
		known[m.Version] = true
	}
	for v := range have {
		if !known[v] {
			return nil, fmt.Errorf("the database has schema version %d, which this reportd does not know: run a newer reportd", v)
		}
	}
	for _, m := range steps {
		if have[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}
