package boltstore

import (
	"context"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// bucketResults (storage version 8): report id -> the report's per-test
// results, report.EncodeResults (gzip'd JSON). Written with the row by
// CreateReport or later by SetResults (backfill), removed with the row.
var bucketResults = []byte("results")

// putResults stores r for report id in tx (nil: none).
func putResults(tx *bolt.Tx, id int64, r *report.Results) error {
	if r == nil {
		return tx.Bucket(bucketResults).Delete(idKey(id))
	}
	b, err := report.EncodeResults(r)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketResults).Put(idKey(id), b)
}

func deleteResults(tx *bolt.Tx, id int64) error {
	return tx.Bucket(bucketResults).Delete(idKey(id))
}

func (s *Store) Results(ctx context.Context, id int64) (*report.Results, error) {
	var out *report.Results
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketReports).Get(idKey(id)) == nil {
			return notFound("report", id)
		}
		bk := tx.Bucket(bucketResults)
		if bk == nil { // an old store opened read-only
			return nil
		}
		v := bk.Get(idKey(id))
		if v == nil {
			return nil
		}
		var err error
		out, err = report.DecodeResults(v)
		return err
	})
	return out, storageErr(err)
}

func (s *Store) SetResults(ctx context.Context, id int64, r *report.Results) error {
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketReports).Get(idKey(id)) == nil {
			return notFound("report", id)
		}
		return putResults(tx, id, r)
	}))
}

// History walks the name (+ type, + branch) index of Latest backwards
// from its last key (or from Before),
// so that the newest q.Limit reports cost q.Limit cursor steps whatever
// the project's size.
func (s *Store) History(ctx context.Context, q report.HistoryQuery) ([]report.ReportRecord, error) {
	var bucket, prefix []byte
	switch {
	case q.Type != nil && q.Branch != nil:
		bucket, prefix = bucketLatestNameTypeBranch, nameTypeBranchPrefix(q.Project, q.Name, string(*q.Type), *q.Branch)
	case q.Type != nil:
		bucket, prefix = bucketLatestNameType, nameTypePrefix(q.Project, q.Name, string(*q.Type))
	case q.Branch != nil:
		bucket, prefix = bucketLatest, latestPrefix(q.Project, q.Name, *q.Branch)
	default:
		bucket, prefix = bucketLatestName, labelPrefix(q.Project, q.Name)
	}
	// Start past the last key of the prefix, or at prefix ‖ Before.
	start := append(slices.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	if q.Before > 0 {
		start = append(slices.Clone(prefix), idKey(q.Before)...)
	}
	out := []report.ReportRecord{}
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucket)
		if bk == nil {
			return report.Errorf(report.Storage, "the store has no %s index yet: open it read-write once to upgrade it", bucket)
		}
		reports := tx.Bucket(bucketReports)
		c := bk.Cursor()
		k, _ := c.Seek(start)
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		for ; k != nil && len(out) < q.Limit; k, _ = c.Prev() {
			if len(k) != len(prefix)+8 || !slices.Equal(k[:len(prefix)], prefix) {
				break
			}
			id := k[len(prefix):]
			v := reports.Get(id)
			if v == nil {
				continue
			}
			r, _, err := s.decodeReport(int64(binary.BigEndian.Uint64(id)), v)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, storageErr(err)
	}
	slices.Reverse(out)
	return out, nil
}
