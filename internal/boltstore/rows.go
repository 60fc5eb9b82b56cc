package boltstore

import (
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// Rows are stored as JSON: self-describing, so a schema step can add fields
// without rewriting every row. Times are Unix seconds, rendered in the
// configured zone when read.
type projectRow struct {
	Name        string  `json:"n"`
	Description *string `json:"d,omitempty"`
	Created     int64   `json:"c"`
	Cover       *string `json:"v,omitempty"`
	Count       int64   `json:"k"`
	// Retention policy (report.Retention); nil fields inherit the server
	// default. Rows written before it have none.
	KeepLast   *int64 `json:"r,omitempty"`
	MaxAgeDays *int64 `json:"a,omitempty"`
	KeepNewest *bool  `json:"w,omitempty"`
	// Slug (storage version 6, slugs.go); rows of older versions get one
	// in the upgrade.
	Slug string `json:"s,omitempty"`
}

type reportRow struct {
	Project  int64  `json:"p"`
	Name     string `json:"n"`
	Type     string `json:"t"`
	Path     string `json:"f"`
	Uploaded int64  `json:"u"`
	Size     int64  `json:"s"`
	SHA256   string `json:"h"`
	// Build metadata; empty means unset (rows written before it have none).
	Label    string `json:"m,omitempty"`
	Branch   string `json:"b,omitempty"`
	Commit   string `json:"c,omitempty"`
	BuildURL string `json:"l,omitempty"`
	BuildID  string `json:"i,omitempty"`
	// What the upload was recognised as (summary.go); unset when unknown.
	Generator string `json:"g,omitempty"`
	Lines     *int64 `json:"y,omitempty"` // line coverage in hundredths of a percent
	Passed    *int64 `json:"o,omitempty"`
	Failed    *int64 `json:"x,omitempty"`
	Skipped   *int64 `json:"z,omitempty"`
	Flaky     *int64 `json:"r,omitempty"` // rows written before it have none
	// A site report (storage version 5): kind "site" (unset: a file),
	// its entry page, number of files and total bytes.
	Kind  string `json:"k,omitempty"`
	Entry string `json:"e,omitempty"`
	Files int64  `json:"w,omitempty"`
	Bytes int64  `json:"v,omitempty"`
}

// updateProjectRow reads project id's row, lets change edit it and stores
// it again, returning the bytes stored; NotFound if there is no such row.
func updateProjectRow(tx *bolt.Tx, id int64, change func(*projectRow)) ([]byte, error) {
	bk := tx.Bucket(bucketProjects)
	b := bk.Get(idKey(id))
	if b == nil {
		return nil, notFound("project", id)
	}
	var row projectRow
	if err := unmarshalProjectRow(b, &row); err != nil {
		return nil, err
	}
	change(&row)
	nb, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	return nb, bk.Put(idKey(id), nb)
}

func (s *Store) decodeProject(id int64, b []byte) (report.Project, projectRow, error) {
	var row projectRow
	if err := unmarshalProjectRow(b, &row); err != nil {
		return report.Project{}, row, report.Wrap(report.Storage, err, "corrupt project row")
	}
	return report.Project{
		ID:          id,
		Name:        row.Name,
		Slug:        row.Slug,
		Description: row.Description,
		CreatedAt:   report.LocalTime{Time: s.clock.Local(time.Unix(row.Created, 0))},
		CoverImage:  row.Cover,
		ReportCount: row.Count,
		Retention:   row.retention(),
	}, row, nil
}

// retention is the row's policy, nil when it has none.
func (row *projectRow) retention() *report.Retention {
	r := report.Retention{KeepLast: intPtr(row.KeepLast), MaxAgeDays: intPtr(row.MaxAgeDays), KeepNewestPerBranch: row.KeepNewest}
	if r.IsZero() {
		return nil
	}
	return &r
}

// setRetention stores r in the row (nil or zero: none).
func (row *projectRow) setRetention(r *report.Retention) {
	row.KeepLast, row.MaxAgeDays, row.KeepNewest = nil, nil, nil
	if r == nil {
		return
	}
	if r.KeepLast != nil {
		row.KeepLast = ptrTo(int64(*r.KeepLast))
	}
	if r.MaxAgeDays != nil {
		row.MaxAgeDays = ptrTo(int64(*r.MaxAgeDays))
	}
	if r.KeepNewestPerBranch != nil {
		row.KeepNewest = ptrTo(*r.KeepNewestPerBranch)
	}
}

func intPtr(v *int64) *int {
	if v == nil {
		return nil
	}
	return ptrTo(int(*v))
}

func (s *Store) decodeReport(id int64, b []byte) (report.ReportRecord, reportRow, error) {
	var row reportRow
	if err := unmarshalReportRow(b, &row); err != nil {
		return report.ReportRecord{}, row, report.Wrap(report.Storage, err, "corrupt report row")
	}
	rec := report.ReportRecord{
		Report: report.Report{
			ID:         id,
			ProjectID:  row.Project,
			FileName:   row.Name,
			FileType:   report.FileType(row.Type),
			FilePath:   row.Path,
			UploadTime: report.LocalTime{Time: s.clock.Local(time.Unix(row.Uploaded, 0))},
		},
		Size:   row.Size,
		SHA256: row.SHA256,
	}
	withMeta(&rec.Report, &row)
	return rec, row, nil
}

// withMeta copies a row's build metadata into r. A row without a name
// gets the one derived from its file name.
func withMeta(r *report.Report, row *reportRow) {
	r.Name = row.Label
	if r.Name == "" {
		r.Name = report.NameFromFile(row.Name)
	}
	r.Branch, r.Commit = optional(row.Branch), optional(row.Commit)
	r.BuildURL, r.BuildID = optional(row.BuildURL), optional(row.BuildID)
	r.Generator, r.Summary = row.Generator, summaryOf(row)
	r.Kind = report.KindFile
	if row.Kind != "" {
		r.Kind, r.Entry, r.Files, r.Bytes = row.Kind, row.Entry, int(row.Files), row.Bytes
	}
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

func encodeReport(r report.ReportRecord) ([]byte, error) {
	return json.Marshal(rowOf(r))
}

func rowOf(r report.ReportRecord) reportRow {
	row := reportRow{
		Project: r.ProjectID, Name: r.FileName, Type: string(r.FileType), Path: r.FilePath,
		Uploaded: r.UploadTime.Unix(), Size: r.Size, SHA256: r.SHA256,
		Label: r.Name, Branch: deref(r.Branch), Commit: deref(r.Commit),
		BuildURL: deref(r.BuildURL), BuildID: deref(r.BuildID),
		Generator: r.Generator,
	}
	if r.Kind == report.KindSite {
		row.Kind, row.Entry, row.Files, row.Bytes = r.Kind, r.Entry, int64(r.Files), r.Bytes
	}
	setSummary(&row, r.Summary)
	return row
}

func ptrTo[T any](v T) *T { return &v }
