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
// are unambiguous. Kept in the same transaction as the row, like the
// indexes of latest_by.go, through putLatest and deleteLatest.
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

// Latest is the newest report (highest id) of q.Project with q's name,
// type and branch, each nil for any (the type only with a name): one
// cursor seek in the index that has those as its key prefix; NotFound
// when there is none.
func (s *Store) Latest(ctx context.Context, q report.LatestQuery) (report.ReportRecord, error) {
	var r report.ReportRecord
	bucket, prefix := latestSeek(q)
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucket)
		if bk == nil { // an old store opened read-only
			return report.Errorf(report.Storage, "the store has no %s index yet: open it read-write once to upgrade it", bucket)
		}
		id, ok := lastUnder(bk, prefix)
		if !ok {
			return q.NotFound()
		}
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

// latestSeek picks the index for q and the key prefix of its matches; the
// id of each match is the 8 bytes after the prefix.
func latestSeek(q report.LatestQuery) (bucket, prefix []byte) {
	switch {
	case q.Name != nil && q.Type != nil && q.Branch != nil:
		return bucketLatestNameTypeBranch, nameTypeBranchPrefix(q.Project, *q.Name, string(*q.Type), *q.Branch)
	case q.Name != nil && q.Type != nil:
		return bucketLatestNameType, nameTypePrefix(q.Project, *q.Name, string(*q.Type))
	case q.Name != nil && q.Branch != nil:
		return bucketLatest, latestPrefix(q.Project, *q.Name, *q.Branch)
	case q.Name != nil:
		return bucketLatestName, labelPrefix(q.Project, *q.Name)
	case q.Branch != nil:
		return bucketLatestBranch, labelPrefix(q.Project, *q.Branch)
	}
	// The per-project index: project id ‖ report id.
	return bucketProjectReports, idKey(q.Project)
}

// lastUnder is the id of the last key that is prefix ‖ 8-byte id.
func lastUnder(bk *bolt.Bucket, prefix []byte) (int64, bool) {
	c := bk.Cursor()
	// Seek past the prefix's last possible key, then step back.
	k, _ := c.Seek(append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k == nil || len(k) != len(prefix)+8 || !bytes.HasPrefix(k, prefix) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(k[len(prefix):])), true
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
