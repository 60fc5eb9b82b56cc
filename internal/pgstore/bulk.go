package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/report"
)

// BulkLoad stores projects and then reports with the ids they carry, with
// COPY in one transaction, and sets reportCount, the per-day counters and
// the id sequences as CreateProject and CreateReport would have. Like
// boltstore.BulkLoad it is for seeding (benchmarks, imports) a database no
// daemon is writing; rows are not validated beyond the schema.
func (s *Store) BulkLoad(ctx context.Context, projects []report.Project, reports []report.ReportRecord) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		prow := make([][]any, 0, len(projects))
		slugs := map[string]bool{} // a database being seeded has none yet
		for _, p := range projects {
			keepLast, maxAge, keepNewest := retentionCols(p.Retention)
			base := p.Slug
			if base == "" {
				base = report.Slugify(p.Name)
			}
			slug, _ := report.UniqueSlug(base, func(s string) (bool, error) { return slugs[s], nil })
			slugs[slug] = true
			prow = append(prow, []any{p.ID, p.Name, slug, p.Description, p.CoverImage, stamp(p.CreatedAt.Time), keepLast, maxAge, keepNewest})
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"projects"},
			[]string{"id", "name", "slug", "description", "cover_image", "created_at", "retention_keep_last", "retention_max_age_days", "retention_keep_newest_per_branch"},
			pgx.CopyFromRows(prow)); err != nil {
			return err
		}
		days := map[dayKey]int64{}
		var maxP, maxR int64
		for _, p := range projects {
			maxP = max(maxP, p.ID)
		}
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i == len(reports) {
				return nil, nil
			}
			r := reports[i]
			i++
			maxR = max(maxR, r.ID)
			days[dayKey{r.ProjectID, s.day(r.UploadTime.Time)}]++
			return reportValues(&r), nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"reports"}, reportColNames, src); err != nil {
			return err
		}
		drow := make([][]any, 0, len(days))
		for k, n := range days {
			d, _ := time.Parse(time.DateOnly, k.d)
			drow = append(drow, []any{k.p, d, n})
		}
		// Counters of rows loaded before (a second BulkLoad) add up.
		if _, err := tx.Exec(ctx, "CREATE TEMP TABLE bulk_days (project_id bigint, day date, count bigint) ON COMMIT DROP"); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"bulk_days"}, []string{"project_id", "day", "count"}, pgx.CopyFromRows(drow)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO project_days AS d (project_id, day, count)
			SELECT project_id, day, count FROM bulk_days
			ON CONFLICT (project_id, day) DO UPDATE SET count = d.count + excluded.count`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE projects p SET report_count = c.n
			FROM (SELECT project_id, count(*) AS n FROM reports GROUP BY project_id) c WHERE c.project_id = p.id`); err != nil {
			return err
		}
		if err := advanceSequences(ctx, tx, maxP, maxR); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "ANALYZE projects, reports, project_days")
		return err
	})
}
