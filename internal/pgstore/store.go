// Package pgstore is a report.MetaStore on PostgreSQL (pgx v5, pgxpool),
// for running reportd past one machine: every replica shares one database.
//
// Semantics are the bbolt store's (internal/boltstore), checked by the same
// conformance suite (internal/storetest):
//
//   - Ids come from sequences (project_ids, report_ids): reserved before a
//     row exists, never reused; a reserved id that is never written is a gap.
//   - A project's reportCount and per-day upload counts are kept exact in
//     the transaction that adds or removes the report, under a row lock on
//     the project; the day is the upload's date in the clock's zone,
//     computed here rather than by the server's TimeZone setting.
//   - Times are stored as timestamptz at second precision and read back in
//     the clock's zone.
//   - Lock order is always project, then report, so a report delete and a
//     project delete never deadlock.
//
// The schema is embedded SQL (migrations/NNNN_name.sql) applied by Open
// under an advisory lock (see Migrate).
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reportd/reportd/internal/report"
)

// Store is a report.MetaStore on a PostgreSQL database.
type Store struct {
	pool  *pgxpool.Pool
	clock report.Clock
}

var _ report.MetaStore = (*Store)(nil)

// Open connects to the database at dsn (a libpq URL or key=value string;
// pgxpool's pool_* parameters are honoured), applies pending migrations
// and returns the store. Replicas may open the same database at once.
func Open(ctx context.Context, dsn string, clock report.Clock) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The error may quote the DSN, password included: say less.
		return nil, errors.New("postgres: the DSN does not parse (see postgres.dsn)")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := New(ctx, pool, clock)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// New is Open on an existing pool, which the store then owns (Close closes it).
func New(ctx context.Context, pool *pgxpool.Pool, clock report.Clock) (*Store, error) {
	if _, err := Migrate(ctx, pool); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &Store{pool: pool, clock: clock}, nil
}

// Pool exposes the connection pool for checks and tools.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping makes a round trip to the server (report.Maintainer).
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func storageErr(err error) error { return storeErr(err) }

func notFound(what string, id int64) error { return report.NoSuch(what, id) }

// inTx runs fn in one read-committed transaction.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return storageErr(pgx.BeginFunc(ctx, s.pool, fn))
}

// day is t's date in the clock's zone, as a date literal.
func (s *Store) day(t time.Time) string { return s.clock.Date(t).Format(time.DateOnly) }

func (s *Store) today() string { return s.clock.Today().Format(time.DateOnly) }

// stamp is a time as stored: the instant at the API's precision (seconds).
func stamp(t time.Time) time.Time { return t.Truncate(time.Second).UTC() }

func (s *Store) nextval(ctx context.Context, seq string) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, "SELECT nextval('"+seq+"')").Scan(&id)
	return id, storageErr(err)
}

func (s *Store) NextProjectID(ctx context.Context) (int64, error) {
	return s.nextval(ctx, "project_ids")
}

func (s *Store) NextReportID(ctx context.Context) (int64, error) {
	return s.nextval(ctx, "report_ids")
}

// projectCols are read by scanProject; today's count comes last, from a
// join on project_days for the day given as $1 or $2.
const projectCols = `p.id, p.name, p.slug, p.description, p.cover_image, p.created_at, p.report_count,
	p.retention_keep_last, p.retention_max_age_days, p.retention_keep_newest_per_branch, coalesce(d.count, 0)`

func (s *Store) scanProject(row pgx.Row) (report.Project, error) {
	var (
		p       report.Project
		created time.Time
		ret     report.Retention
	)
	err := row.Scan(&p.ID, &p.Name, &p.Slug, &p.Description, &p.CoverImage, &created, &p.ReportCount,
		&ret.KeepLast, &ret.MaxAgeDays, &ret.KeepNewestPerBranch, &p.TodayNewReports)
	p.CreatedAt = report.LocalTime{Time: s.clock.Local(created)}
	if !ret.IsZero() {
		p.Retention = &ret
	}
	return p, err
}

// retentionCols is a policy as stored: nil or zero is no policy (every
// column NULL).
func retentionCols(r *report.Retention) (keepLast, maxAgeDays *int, keepNewest *bool) {
	if r == nil {
		return nil, nil, nil
	}
	return r.KeepLast, r.MaxAgeDays, r.KeepNewestPerBranch
}

func (s *Store) CreateProject(ctx context.Context, p report.Project) (report.Project, error) {
	keepLast, maxAge, keepNewest := retentionCols(p.Retention)
	base := p.Slug
	if base == "" {
		base = report.Slugify(p.Name)
	}
	var out report.Project
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		slug, err := claimSlug(ctx, tx, base)
		if err != nil {
			return err
		}
		out, err = s.scanProject(tx.QueryRow(ctx, `
			WITH p AS (
				INSERT INTO projects (id, name, slug, description, cover_image, created_at,
					retention_keep_last, retention_max_age_days, retention_keep_newest_per_branch)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
				RETURNING *)
			SELECT `+projectCols+` FROM p LEFT JOIN project_days d ON false`,
			p.ID, p.Name, slug, p.Description, p.CoverImage, stamp(p.CreatedAt.Time), keepLast, maxAge, keepNewest))
		return err
	})
	return out, storageErr(err)
}

// slugLock is the pg_advisory_xact_lock key under which a transaction
// picks a free slug and writes it ("reportd\x01"): two creates of one
// name never both see the plain slug free.
const slugLock int64 = 0x7265706f72746401

// claimSlug is the first free slug from base on (report.UniqueSlug), taken
// under slugLock until tx ends.
func claimSlug(ctx context.Context, tx pgx.Tx, base string) (string, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", slugLock); err != nil {
		return "", err
	}
	return report.UniqueSlug(base, func(s string) (bool, error) {
		var taken bool
		err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM projects WHERE slug = $1)", s).Scan(&taken)
		return taken, err
	})
}

// ProjectBySlug is the project with that slug: one probe of projects_slug.
func (s *Store) ProjectBySlug(ctx context.Context, slug string) (report.Project, error) {
	p, err := s.scanProject(s.pool.QueryRow(ctx, `
		SELECT `+projectCols+` FROM projects p
		LEFT JOIN project_days d ON d.project_id = p.id AND d.day = $2::date
		WHERE p.slug = $1`, slug, s.today()))
	if errors.Is(err, pgx.ErrNoRows) {
		return report.Project{}, report.Errorf(report.NotFound, "no project with slug %q", slug)
	}
	return p, storageErr(err)
}

func (s *Store) Project(ctx context.Context, id int64) (report.Project, error) {
	p, err := s.scanProject(s.pool.QueryRow(ctx, `
		SELECT `+projectCols+` FROM projects p
		LEFT JOIN project_days d ON d.project_id = p.id AND d.day = $2::date
		WHERE p.id = $1`, id, s.today()))
	if errors.Is(err, pgx.ErrNoRows) {
		return report.Project{}, notFound("project", id)
	}
	return p, storageErr(err)
}

// projectsSQL lists every project with today's count ($1): one range of
// project_days_day (migration 6) for the counts.
const projectsSQL = `
		SELECT ` + projectCols + ` FROM projects p
		LEFT JOIN project_days d ON d.project_id = p.id AND d.day = $1::date
		ORDER BY p.id`

func (s *Store) Projects(ctx context.Context) ([]report.Project, error) {
	rows, err := s.pool.Query(ctx, projectsSQL, s.today())
	if err != nil {
		return nil, storageErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (report.Project, error) { return s.scanProject(r) })
	if err != nil {
		return nil, storageErr(err)
	}
	if out == nil {
		out = []report.Project{}
	}
	return out, nil
}

func (s *Store) UpdateProject(ctx context.Context, id int64, c report.ProjectChange) (report.Project, *string, error) {
	var (
		p   report.Project
		old *string
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var cover *string
		err := tx.QueryRow(ctx, "SELECT cover_image FROM projects WHERE id = $1 FOR UPDATE", id).Scan(&cover)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("project", id)
		}
		if err != nil {
			return err
		}
		if c.CoverImage != nil {
			old = cover
		}
		if c.Slug != nil {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", slugLock); err != nil {
				return err
			}
			var owner int64
			err := tx.QueryRow(ctx, "SELECT id FROM projects WHERE slug = $1 AND id <> $2", *c.Slug, id).Scan(&owner)
			if err == nil {
				return report.SlugTaken(*c.Slug, owner)
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		// A nil change keeps the column; a non-nil one sets it (even to "").
		// A retention change replaces the whole policy (a zero one clears it).
		keepLast, maxAge, keepNewest := retentionCols(c.Retention)
		p, err = s.scanProject(tx.QueryRow(ctx, `
			WITH p AS (
				UPDATE projects SET
					name        = CASE WHEN $2 THEN $3 ELSE name END,
					slug        = CASE WHEN $13 THEN $14 ELSE slug END,
					description = CASE WHEN $4 THEN $5 ELSE description END,
					cover_image = CASE WHEN $6 THEN $7 ELSE cover_image END,
					retention_keep_last              = CASE WHEN $9 THEN $10 ELSE retention_keep_last END,
					retention_max_age_days           = CASE WHEN $9 THEN $11 ELSE retention_max_age_days END,
					retention_keep_newest_per_branch = CASE WHEN $9 THEN $12 ELSE retention_keep_newest_per_branch END
				WHERE id = $1 RETURNING *)
			SELECT `+projectCols+` FROM p
			LEFT JOIN project_days d ON d.project_id = p.id AND d.day = $8::date`,
			id, c.Name != nil, c.Name, c.Description != nil, c.Description, c.CoverImage != nil, c.CoverImage, s.today(),
			c.Retention != nil, keepLast, maxAge, keepNewest, c.Slug != nil, c.Slug))
		return err
	})
	if err != nil {
		return report.Project{}, nil, err
	}
	return p, old, nil
}

// DeleteProject removes the project with its reports and day counts in one
// transaction and returns them (reports by id ascending), so the caller can
// delete their files. Like the bbolt store it returns the project as it
// was stored: todayNewReports is not filled in.
func (s *Store) DeleteProject(ctx context.Context, id int64) (report.Project, []report.ReportRecord, error) {
	var (
		p       report.Project
		removed []report.ReportRecord
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		// The row lock first: uploads into the project wait, then fail.
		p, err = s.scanProject(tx.QueryRow(ctx, `
			SELECT `+projectCols+` FROM projects p LEFT JOIN project_days d ON false
			WHERE p.id = $1 FOR UPDATE OF p`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("project", id)
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			WITH r AS (DELETE FROM reports WHERE project_id = $1 RETURNING *)
			SELECT `+reportCols+` FROM r ORDER BY id`, id)
		if err != nil {
			return err
		}
		if removed, err = pgx.CollectRows(rows, s.scanReportRow); err != nil {
			return err
		}
		if len(removed) == 0 {
			removed = nil // as the bbolt store: nothing removed is nil
		}
		if _, err := tx.Exec(ctx, "DELETE FROM project_days WHERE project_id = $1", id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM projects WHERE id = $1", id)
		return err
	})
	if err != nil {
		return report.Project{}, nil, err
	}
	return p, removed, nil
}

// FilePaths calls fn with every project's cover, then every report's file,
// each in id order.
func (s *Store) FilePaths(ctx context.Context, fn func(path string) error) error {
	rows, err := s.pool.Query(ctx, `
		SELECT path FROM (
			SELECT 0 AS k, id, cover_image AS path FROM projects WHERE cover_image IS NOT NULL
			UNION ALL
			SELECT 1, id, CASE WHEN kind = 'site' THEN '`+report.SitesPrefix+`' || id || '.json' ELSE file_path END
			FROM reports) f
		ORDER BY k, id`)
	if err != nil {
		return storageErr(err)
	}
	defer rows.Close()
	var path string
	_, err = pgx.ForEachRow(rows, []any{&path}, func() error { return fn(path) })
	return storageErr(err)
}
