package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/report"
)

// reportColNames are the columns of a report row: read by scanReport and
// written from reportValues (CreateReport, BulkLoad), in this order.
var reportColNames = []string{"id", "project_id", "file_name", "file_type", "file_path", "upload_time", "size", "sha256",
	"name", "branch", "commit", "build_url", "build_id",
	"generator", "summary_lines", "summary_passed", "summary_failed", "summary_skipped", "summary_flaky",
	"kind", "site_entry", "site_files", "site_bytes"}

// reportCols is reportColNames as a select list.
var reportCols = strings.Join(reportColNames, ", ")

// insertReport inserts one row from reportValues and returns it.
var insertReport = func() string {
	ph := make([]string, len(reportColNames))
	for i := range ph {
		ph[i] = "$" + strconv.Itoa(i+1)
	}
	return "INSERT INTO reports (" + reportCols + ") VALUES (" + strings.Join(ph, ", ") + ") RETURNING " + reportCols
}()

// reportValues are r's values for reportColNames.
func reportValues(r *report.ReportRecord) []any {
	sum := summaryOf(r.Summary)
	k := kindOf(&r.Report)
	return []any{r.ID, r.ProjectID, r.FileName, string(r.FileType), r.FilePath, stamp(r.UploadTime.Time), r.Size, r.SHA256,
		label(&r.Report), deref(r.Branch), nullable(r.Commit), nullable(r.BuildURL), nullable(r.BuildID),
		r.Generator, sum.Lines, sum.Passed, sum.Failed, sum.Skipped, sum.Flaky,
		k.kind, k.entry, k.files, k.bytes}
}

func (s *Store) scanReport(row pgx.Row) (report.ReportRecord, error) {
	var (
		r        report.ReportRecord
		uploaded time.Time
		fileType string
		branch   string
		sum      summaryCols
		files    int64
	)
	err := row.Scan(&r.ID, &r.ProjectID, &r.FileName, &fileType, &r.FilePath, &uploaded, &r.Size, &r.SHA256,
		&r.Name, &branch, &r.Commit, &r.BuildURL, &r.BuildID,
		&r.Generator, &sum.Lines, &sum.Passed, &sum.Failed, &sum.Skipped, &sum.Flaky,
		&r.Kind, &r.Entry, &files, &r.Bytes)
	r.Files = int(files)
	r.Summary = sum.summary()
	r.FileType = report.FileType(fileType)
	r.UploadTime = report.LocalTime{Time: s.clock.Local(uploaded)}
	r.Branch = optional(branch)
	return r, err
}

func (s *Store) scanReportRow(row pgx.CollectableRow) (report.ReportRecord, error) {
	return s.scanReport(row)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nullable stores "" as NULL, as the bbolt store treats "" as unset.
func nullable(s *string) *string { return optional(deref(s)) }

// label is the report name a row stores: the given one, else the one
// derived from the file name (which the bbolt store derives on read).
func label(r *report.Report) string {
	if r.Name != "" {
		return r.Name
	}
	return report.NameFromFile(r.FileName)
}

// summaryCols is a report.Summary as stored: the line coverage in
// hundredths of a percent, rounded as the bbolt store rounds it, so that
// both read back the same float.
type summaryCols struct {
	Lines, Passed, Failed, Skipped, Flaky *int64
}

func summaryOf(s *report.Summary) summaryCols {
	if s.Empty() {
		return summaryCols{}
	}
	c := summaryCols{Passed: s.Passed, Failed: s.Failed, Skipped: s.Skipped, Flaky: s.Flaky}
	if s.Lines != nil {
		l := int64(math.Round(*s.Lines * 100))
		c.Lines = &l
	}
	return c
}

// summary is nil when no figure is known.
func (c summaryCols) summary() *report.Summary {
	if c.Lines == nil && c.Passed == nil && c.Failed == nil && c.Skipped == nil && c.Flaky == nil {
		return nil
	}
	s := &report.Summary{Passed: c.Passed, Failed: c.Failed, Skipped: c.Skipped, Flaky: c.Flaky}
	if c.Lines != nil {
		l := float64(*c.Lines) / 100
		s.Lines = &l
	}
	return s
}

// kindCols is a report's kind as stored: 'file' with zero site columns,
// or 'site' with its entry, files and bytes.
type kindCols struct {
	kind         string
	entry        string
	files, bytes int64
}

func kindOf(r *report.Report) kindCols {
	if r.Kind != report.KindSite {
		return kindCols{kind: report.KindFile}
	}
	return kindCols{kind: report.KindSite, entry: r.Entry, files: int64(r.Files), bytes: r.Bytes}
}

// lockProject takes the project's row lock for a change to its counters;
// NotFound if it is gone, so an upload racing a project delete fails
// instead of leaving an orphan row.
func lockProject(ctx context.Context, tx pgx.Tx, id int64, delta int64) error {
	tag, err := tx.Exec(ctx, "UPDATE projects SET report_count = greatest(report_count + $2, 0) WHERE id = $1", id, delta)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("project", id)
	}
	return nil
}

func (s *Store) CreateReport(ctx context.Context, r report.ReportRecord) (report.ReportRecord, error) {
	var out report.ReportRecord
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockProject(ctx, tx, r.ProjectID, +1); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO project_days AS d (project_id, day, count) VALUES ($1, $2::date, 1)
			ON CONFLICT (project_id, day) DO UPDATE SET count = d.count + 1`,
			r.ProjectID, s.day(r.UploadTime.Time)); err != nil {
			return err
		}
		var err error
		out, err = s.scanReport(tx.QueryRow(ctx, insertReport, reportValues(&r)...))
		if err != nil || r.Results == nil {
			return err
		}
		return putResults(ctx, tx, r.ID, r.Results)
	})
	if err != nil {
		return report.ReportRecord{}, err
	}
	return out, nil
}

func (s *Store) Report(ctx context.Context, id int64) (report.ReportRecord, error) {
	r, err := s.scanReport(s.pool.QueryRow(ctx, "SELECT "+reportCols+" FROM reports WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return report.ReportRecord{}, notFound("report", id)
	}
	return r, storageErr(err)
}

func (s *Store) Reports(ctx context.Context, projectID *int64) ([]report.ReportRecord, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if projectID == nil {
		rows, err = s.pool.Query(ctx, "SELECT "+reportCols+" FROM reports ORDER BY id")
	} else {
		rows, err = s.pool.Query(ctx, "SELECT "+reportCols+" FROM reports WHERE project_id = $1 ORDER BY id", *projectID)
	}
	return s.collectReports(rows, err)
}

// collectReports reads the report rows of a query ([] when none).
func (s *Store) collectReports(rows pgx.Rows, err error) ([]report.ReportRecord, error) {
	if err != nil {
		return nil, storageErr(err)
	}
	out, err := pgx.CollectRows(rows, s.scanReportRow)
	if err != nil {
		return nil, storageErr(err)
	}
	if out == nil {
		out = []report.ReportRecord{}
	}
	return out, nil
}

func (s *Store) UpdateReport(ctx context.Context, id int64, c report.ReportChange) (report.ReportRecord, error) {
	var r report.ReportRecord
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		r, err = s.scanReport(tx.QueryRow(ctx, "SELECT "+reportCols+" FROM reports WHERE id = $1 FOR UPDATE", id))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("report", id)
		}
		if err != nil {
			return err
		}
		c.Apply(&r.Report)
		r, err = s.scanReport(tx.QueryRow(ctx, `
			UPDATE reports SET file_name = $2, file_type = $3, file_path = $4,
				name = $5, branch = $6, commit = $7, build_url = $8, build_id = $9
			WHERE id = $1 RETURNING `+reportCols,
			id, r.FileName, string(r.FileType), r.FilePath,
			label(&r.Report), deref(r.Branch), nullable(r.Commit), nullable(r.BuildURL), nullable(r.BuildID)))
		return err
	})
	if err != nil {
		return report.ReportRecord{}, err
	}
	return r, nil
}

func (s *Store) DeleteReport(ctx context.Context, id int64) (report.ReportRecord, error) {
	var r report.ReportRecord
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// Lock the project before the report (the order DeleteProject
		// takes them in), so the two never deadlock.
		var project int64
		err := tx.QueryRow(ctx, "SELECT project_id FROM reports WHERE id = $1", id).Scan(&project)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("report", id)
		}
		if err != nil {
			return err
		}
		if err := lockProject(ctx, tx, project, -1); err != nil {
			if report.IsKind(err, report.NotFound) { // the project went first, with the report
				return notFound("report", id)
			}
			return err
		}
		r, err = s.scanReport(tx.QueryRow(ctx, `DELETE FROM reports WHERE id = $1 AND project_id = $2 RETURNING `+reportCols, id, project))
		if errors.Is(err, pgx.ErrNoRows) { // deleted while we waited for the lock
			return notFound("report", id)
		}
		if err != nil {
			return err
		}
		day := s.day(r.UploadTime.Time)
		if _, err := tx.Exec(ctx, `UPDATE project_days SET count = count - 1 WHERE project_id = $1 AND day = $2::date`, project, day); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM project_days WHERE project_id = $1 AND day = $2::date AND count <= 0`, project, day)
		return err
	})
	if err != nil {
		return report.ReportRecord{}, err
	}
	return r, nil
}

// Latest is the newest report (highest id) of q.Project matching q's name,
// type and branch (nil: any; "" for reports without a branch; the type
// only with a name): one probe of the index whose key starts with the
// fields q sets (reports_project, reports_latest_name,
// reports_latest_branch, reports_latest, reports_latest_name_type,
// reports_latest_name_type_branch); NotFound when there is none.
func (s *Store) Latest(ctx context.Context, q report.LatestQuery) (report.ReportRecord, error) {
	query, args := latestSQL(q)
	r, err := s.scanReport(s.pool.QueryRow(ctx, query, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return report.ReportRecord{}, q.NotFound()
	}
	return r, storageErr(err)
}

// latestSQL is Latest's statement for q and its arguments.
//
// The project is matched as project_id = ANY(array of one) and the rows
// ordered by (project_id, id): written as project_id = $1, the planner
// drops project_id from the ordering (it is a constant) and may walk the
// primary key backwards, filtering, which reads every newer report of
// other projects when this one has gone quiet. An array match is no
// constant to it, so only an index led by project_id gives that order,
// and the probe stays one seek (TestLatestUsesIndex).
func latestSQL(q report.LatestQuery) (string, []any) {
	where, args := "project_id = ANY($1::bigint[])", []any{[]int64{q.Project}}
	if q.Name != nil {
		args = append(args, *q.Name)
		where += fmt.Sprintf(" AND name = $%d", len(args))
		if q.Type != nil { // reports_latest_name_type[_branch] (migration 9)
			args = append(args, string(*q.Type))
			where += fmt.Sprintf(" AND file_type = $%d", len(args))
		}
	}
	if q.Branch != nil {
		args = append(args, *q.Branch)
		where += fmt.Sprintf(" AND branch = $%d", len(args))
	}
	// reports_project is (project_id, id): read backwards. The others end
	// in id DESC: read forwards.
	order := "project_id, id DESC"
	if q.Name == nil && q.Branch == nil {
		order = "project_id DESC, id DESC"
	}
	return "SELECT " + reportCols + " FROM reports WHERE " + where + " ORDER BY " + order + " LIMIT 1", args
}
