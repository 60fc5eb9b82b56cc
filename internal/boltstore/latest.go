package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// bucketLatest: project id ‖ name ‖ 0 ‖ branch ‖ 0 ‖ report id -> nil.
// The last key under a (project, name, branch) prefix is the newest such
// report, found with one cursor seek instead of a scan. Names and branches
// never hold a NUL (control characters are refused), so the separators
// are unambiguous. Kept in the same transaction as the row.
var bucketLatest = []byte("latest")

// latestPrefix is the key prefix of one (project, name, branch).
func latestPrefix(project int64, name, branch string) []byte {
	k := make([]byte, 0, 8+len(name)+len(branch)+2+8)
	k = append(k, idKey(project)...)
	k = append(k, name...)
	k = append(k, 0)
	k = append(k, branch...)
	return append(k, 0)
}

func latestKey(project int64, row *reportRow, id int64) []byte {
	return append(latestPrefix(project, rowLabel(row), row.Branch), idKey(id)...)
}

// rowLabel is a row's report name; rows written before names existed
// have the one derived from their file name.
func rowLabel(row *reportRow) string {
	if row.Label != "" {
		return row.Label
	}
	return report.NameFromFile(row.Name)
}

// Latest is the newest report (highest id) of project with this name and
// branch ("" for reports without a branch); NotFound when there is none.
func (s *Store) Latest(ctx context.Context, project int64, name, branch string) (report.ReportRecord, error) {
	var r report.ReportRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := latestPrefix(project, name, branch)
		bk := tx.Bucket(bucketLatest)
		if bk == nil { // a version 1 store opened read-only
			return report.Errorf(report.Storage, "the store has no latest index yet: open it read-write once to upgrade it")
		}
		c := bk.Cursor()
		// Seek past the prefix's last possible key, then step back.
		k, _ := c.Seek(append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		if k == nil || len(k) != len(prefix)+8 || !bytes.HasPrefix(k, prefix) {
			return report.Errorf(report.NotFound, "no report named %q on branch %q in project %d", name, branch, project)
		}
		id := int64(binary.BigEndian.Uint64(k[len(prefix):]))
		v := tx.Bucket(bucketReports).Get(idKey(id))
		if v == nil {
			return notFound("report", id)
		}
		var err error
		r, _, err = s.decodeReport(id, v)
		return err
	})
	return r, storageErr(err)
}

// buildLatest fills the index from the rows (the schema step to version 2).
func buildLatest(tx *bolt.Tx) error {
	latest := tx.Bucket(bucketLatest)
	return tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
		var row reportRow
		if err := unmarshalReportRow(v, &row); err != nil {
			return err
		}
		return latest.Put(latestKey(row.Project, &row, int64(binary.BigEndian.Uint64(k))), nil)
	})
}
