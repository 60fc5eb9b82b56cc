package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// tokenTimeout bounds one token read or write: tokens.Store takes no
// context (its bbolt implementation needs none).
const tokenTimeout = 30 * time.Second

var _ tokens.Store = (*Store)(nil)

// PutToken writes one token record (insert or replace by id).
func (s *Store) PutToken(r tokens.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), tokenTimeout)
	defer cancel()
	projects := r.Projects
	if projects == nil {
		projects = []int64{}
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO tokens (id, name, scope, projects, hash, created_at, expires_at, revoked_at, last_used, create_projects, project_prefix)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, scope = excluded.scope,
			projects = excluded.projects, hash = excluded.hash, created_at = excluded.created_at,
			expires_at = excluded.expires_at, revoked_at = excluded.revoked_at, last_used = excluded.last_used,
			create_projects = excluded.create_projects, project_prefix = excluded.project_prefix`,
		r.ID, r.Name, int16(r.Scope), projects, r.Hash, r.CreatedAt.UTC(), utcPtr(r.ExpiresAt), utcPtr(r.RevokedAt), utcPtr(r.LastUsed),
		r.CreateProjects, r.ProjectPrefix)
	return storageErr(err)
}

// AddTokenProject adds project to a token's projects in one statement:
// the row lock orders two replicas adding at once, so neither update is
// lost (PutToken, which writes the whole row, never carries this change).
func (s *Store) AddTokenProject(id string, project int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), tokenTimeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `
		UPDATE tokens SET projects = (SELECT array_agg(DISTINCT p ORDER BY p) FROM unnest(array_append(projects, $2::bigint)) AS p)
		WHERE id = $1`, id, project)
	if err != nil {
		return storageErr(err)
	}
	if tag.RowsAffected() == 0 {
		return report.Errorf(report.NotFound, "token %s not found", id)
	}
	return nil
}

// Tokens reads every token record, by id.
func (s *Store) Tokens() ([]tokens.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tokenTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, name, scope, projects, hash, created_at, expires_at, revoked_at, last_used,
		create_projects, project_prefix FROM tokens ORDER BY id`)
	if err != nil {
		return nil, storageErr(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tokens.Record, error) {
		var (
			r     tokens.Record
			scope int16
		)
		err := row.Scan(&r.ID, &r.Name, &scope, &r.Projects, &r.Hash, &r.CreatedAt, &r.ExpiresAt, &r.RevokedAt, &r.LastUsed,
			&r.CreateProjects, &r.ProjectPrefix)
		r.Scope = tokens.Scope(scope)
		r.CreatedAt = r.CreatedAt.UTC()
		r.ExpiresAt, r.RevokedAt, r.LastUsed = utcPtr(r.ExpiresAt), utcPtr(r.RevokedAt), utcPtr(r.LastUsed)
		if r.Projects == nil {
			r.Projects = []int64{}
		}
		return r, err
	})
	return out, storageErr(err)
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
