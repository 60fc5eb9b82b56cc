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
}

type reportRow struct {
	Project  int64  `json:"p"`
	Name     string `json:"n"`
	Type     string `json:"t"`
	Path     string `json:"f"`
	Uploaded int64  `json:"u"`
	Size     int64  `json:"s"`
	SHA256   string `json:"h"`
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
		Description: row.Description,
		CreatedAt:   report.LocalTime{Time: s.clock.Local(time.Unix(row.Created, 0))},
		CoverImage:  row.Cover,
		ReportCount: row.Count,
	}, row, nil
}

func (s *Store) decodeReport(id int64, b []byte) (report.ReportRecord, reportRow, error) {
	var row reportRow
	if err := unmarshalReportRow(b, &row); err != nil {
		return report.ReportRecord{}, row, report.Wrap(report.Storage, err, "corrupt report row")
	}
	return report.ReportRecord{
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
	}, row, nil
}

func encodeReport(r report.ReportRecord) ([]byte, error) {
	return json.Marshal(reportRow{
		Project: r.ProjectID, Name: r.FileName, Type: string(r.FileType), Path: r.FilePath,
		Uploaded: r.UploadTime.Unix(), Size: r.Size, SHA256: r.SHA256,
	})
}
