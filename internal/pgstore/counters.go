package pgstore

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reportd/reportd/internal/report"
)

// This file serves `reportd check` and `reportd migrate`: the counters as
// stored and as the rows say they should be, and the sequences.

// DayCounts are the stored per-day counters, by project and day (YYYYMMDD).
func (s *Store) DayCounts(ctx context.Context) ([]report.DayCount, error) {
	return dayCounts(ctx, s.pool)
}

func dayCounts(ctx context.Context, q querier) ([]report.DayCount, error) {
	rows, err := q.Query(ctx, "SELECT project_id, day, count FROM project_days WHERE count <> 0 ORDER BY project_id, day")
	if err != nil {
		return nil, storageErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (report.DayCount, error) {
		var (
			d   report.DayCount
			day time.Time
		)
		err := r.Scan(&d.Project, &day, &d.Count)
		d.Day = day.Format("20060102")
		return d, err
	})
	return out, storageErr(err)
}

// querier is the pool or a transaction.
type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}

// dayKey is a project and a day.
type dayKey struct {
	p int64
	d string
}

// countDays counts the report rows by project and upload date in the
// clock's zone, the date formatted with layout.
func (s *Store) countDays(ctx context.Context, q querier, layout string) (map[dayKey]int64, error) {
	rows, err := q.Query(ctx, "SELECT project_id, upload_time FROM reports")
	if err != nil {
		return nil, err
	}
	n := map[dayKey]int64{}
	var (
		p  int64
		at time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&p, &at}, func() error {
		n[dayKey{p, s.clock.Date(at).Format(layout)}]++
		return nil
	})
	return n, err
}

// realDayCounts are the per-day counts the report rows call for: each
// report's upload date in the clock's zone.
func (s *Store) realDayCounts(ctx context.Context, q querier) ([]report.DayCount, error) {
	n, err := s.countDays(ctx, q, "20060102")
	if err != nil {
		return nil, storageErr(err)
	}
	out := make([]report.DayCount, 0, len(n))
	for k, c := range n {
		out = append(out, report.DayCount{Project: k.p, Day: k.d, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Project != out[j].Project {
			return out[i].Project < out[j].Project
		}
		return out[i].Day < out[j].Day
	})
	return out, nil
}

// Drift is a counter that disagrees with the rows: What is "reportCount"
// or "dayCount" (Day YYYYMMDD), or "report-without-project".
type Drift = report.Drift

// CounterDrift compares reportCount and the per-day counters with the rows.
func (s *Store) CounterDrift(ctx context.Context) ([]Drift, error) {
	return s.counterDrift(ctx, s.pool)
}

// counterDrift is CounterDrift on the pool or in a transaction.
func (s *Store) counterDrift(ctx context.Context, q querier) ([]Drift, error) {
	var out []Drift
	rows, err := q.Query(ctx, `
		SELECT p.id, p.report_count, count(r.id) FROM projects p
		LEFT JOIN reports r ON r.project_id = p.id
		GROUP BY p.id HAVING p.report_count <> count(r.id) ORDER BY p.id`)
	if err != nil {
		return nil, storageErr(err)
	}
	var d Drift
	if _, err := pgx.ForEachRow(rows, []any{&d.Project, &d.Stored, &d.Actual}, func() error {
		out = append(out, Drift{What: "reportCount", Project: d.Project, Stored: d.Stored, Actual: d.Actual})
		return nil
	}); err != nil {
		return nil, storageErr(err)
	}
	stored, err := dayCounts(ctx, q)
	if err != nil {
		return nil, err
	}
	real, err := s.realDayCounts(ctx, q)
	if err != nil {
		return nil, err
	}
	out = append(out, report.DayDrift(stored, real)...)
	return out, nil
}

// Recount rewrites reportCount and the per-day counters from the rows in
// one transaction (under every project's row lock, so uploads wait), and
// returns the drift it fixed (CounterDrift in that transaction, once the
// locks are held).
func (s *Store) Recount(ctx context.Context) ([]Drift, error) {
	var fixed []Drift
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT id FROM projects ORDER BY id FOR UPDATE"); err != nil {
			return err
		}
		var err error
		if fixed, err = s.counterDrift(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE projects p SET report_count = (SELECT count(*) FROM reports r WHERE r.project_id = p.id)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM project_days"); err != nil {
			return err
		}
		n, err := s.countDays(ctx, tx, time.DateOnly)
		if err != nil {
			return err
		}
		for k, c := range n {
			if _, err := tx.Exec(ctx, "INSERT INTO project_days (project_id, day, count) VALUES ($1, $2::date, $3)", k.p, k.d, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return fixed, nil
}

// AdvanceSequences moves the id sequences past project and rep (the last
// ids another store handed out), never backwards.
func (s *Store) AdvanceSequences(ctx context.Context, project, rep int64) error {
	return storageErr(advanceSequences(ctx, s.pool, project, rep))
}

// execer is the pool or a transaction.
type execer interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}

// advanceSequences moves the id sequences past project and rep (ids <= 0
// leave theirs), never backwards (AdvanceSequences, BulkLoad).
func advanceSequences(ctx context.Context, q execer, project, rep int64) error {
	for _, sq := range []struct {
		seq string
		v   int64
	}{{"project_ids", project}, {"report_ids", rep}} {
		if sq.v <= 0 {
			continue
		}
		if _, err := q.Exec(ctx, "SELECT setval('"+sq.seq+"', greatest($1::bigint, (SELECT last_value FROM "+sq.seq+")))", sq.v); err != nil {
			return err
		}
	}
	return nil
}

// Sequences are the sequences' last values (as pg_sequences shows them;
// 0 when never used).
func (s *Store) Sequences(ctx context.Context) (project, rep int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT
		coalesce((SELECT last_value FROM pg_sequences WHERE sequencename = 'project_ids'), 0),
		coalesce((SELECT last_value FROM pg_sequences WHERE sequencename = 'report_ids'), 0)`).Scan(&project, &rep)
	return project, rep, storageErr(err)
}

// Counts is how many rows each table holds.
func (s *Store) Counts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, t := range []string{"projects", "reports", "project_days", "tokens"} {
		var n int64
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return nil, storageErr(err)
		}
		out[t] = n
	}
	return out, nil
}
