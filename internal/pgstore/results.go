package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/report"
)

// putResults stores r for report id in tx (migration 14, report_results).
func putResults(ctx context.Context, tx pgx.Tx, id int64, r *report.Results) error {
	if r == nil {
		_, err := tx.Exec(ctx, "DELETE FROM report_results WHERE report_id = $1", id)
		return err
	}
	b, err := report.EncodeResults(r)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO report_results (report_id, data) VALUES ($1, $2)
		ON CONFLICT (report_id) DO UPDATE SET data = excluded.data`, id, b)
	return err
}

func (s *Store) Results(ctx context.Context, id int64) (*report.Results, error) {
	var (
		exists bool
		data   []byte
	)
	err := s.pool.QueryRow(ctx, `SELECT true, (SELECT data FROM report_results WHERE report_id = r.id)
		FROM reports r WHERE r.id = $1`, id).Scan(&exists, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("report", id)
	}
	if err != nil {
		return nil, storageErr(err)
	}
	if data == nil {
		return nil, nil
	}
	out, err := report.DecodeResults(data)
	return out, storageErr(err)
}

func (s *Store) SetResults(ctx context.Context, id int64, r *report.Results) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, "SELECT 1 FROM reports WHERE id = $1 FOR SHARE", id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("report", id)
		}
		if err != nil {
			return err
		}
		return putResults(ctx, tx, id, r)
	})
}

// History reads the newest q.Limit reports of q's name (and type, and
// branch) from the index of Latest led by those columns
// (reports_latest_name, reports_latest, reports_latest_name_type[_branch]),
// and returns them oldest first. Every leading column of the index is
// matched by equality, so its order is id DESC, the order asked for: one
// range of the index, never a sort (TestHistoryUsesIndex).
func (s *Store) History(ctx context.Context, q report.HistoryQuery) ([]report.ReportRecord, error) {
	query, args := historySQL(q)
	out, err := s.collectReports(s.pool.Query(ctx, query, args...))
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// historySQL is History's statement for q and its arguments.
func historySQL(q report.HistoryQuery) (string, []any) {
	args := []any{q.Project, q.Name, q.Limit}
	where := "project_id = $1 AND name = $2"
	if q.Type != nil { // reports_latest_name_type[_branch] (migration 9)
		args = append(args, string(*q.Type))
		where += fmt.Sprintf(" AND file_type = $%d", len(args))
	}
	if q.Branch != nil {
		args = append(args, *q.Branch)
		where += fmt.Sprintf(" AND branch = $%d", len(args))
	}
	if q.Before > 0 {
		args = append(args, q.Before)
		where += fmt.Sprintf(" AND id < $%d", len(args))
	}
	return fmt.Sprintf("SELECT %s FROM reports WHERE %s ORDER BY id DESC LIMIT $3", reportCols, where), args
}
