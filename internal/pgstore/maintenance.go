package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/report"
)

// This file completes report.Maintainer (with counters.go and bulk.go):
// what `reportd check` reads and repairs.

// Refs lists every object a row refers to: the projects' covers, then the
// reports' stored objects (a site's manifest), each in id order.
func (s *Store) Refs(ctx context.Context) ([]report.FileRef, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT path, project, report FROM (
			SELECT 0 AS k, id, cover_image AS path, id AS project, 0::bigint AS report
			FROM projects WHERE cover_image IS NOT NULL AND cover_image <> ''
			UNION ALL
			SELECT 1, id, CASE WHEN kind = 'site' THEN '`+report.SitesPrefix+`' || id || '.json' ELSE file_path END, project_id, id
			FROM reports) f
		ORDER BY k, id`)
	if err != nil {
		return nil, storageErr(err)
	}
	var (
		out []report.FileRef
		r   report.FileRef
	)
	_, err = pgx.ForEachRow(rows, []any{&r.Path, &r.Project, &r.Report}, func() error {
		out = append(out, r)
		return nil
	})
	return out, storageErr(err)
}

// DropReports deletes the report rows ids (unknown ones are skipped)
// without touching the counters: Recount settles them afterwards.
func (s *Store) DropReports(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, "DELETE FROM reports WHERE id = ANY($1)", ids)
	return storageErr(err)
}

// ClearCover unsets project's cover.
func (s *Store) ClearCover(ctx context.Context, project int64) error {
	_, err := s.pool.Exec(ctx, "UPDATE projects SET cover_image = NULL WHERE id = $1", project)
	return storageErr(err)
}

var _ report.Maintainer = (*Store)(nil)
