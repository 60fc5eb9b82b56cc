package boltstore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Storage version 3 adds two indexes beside bucketLatest, so that the
// newest report by name alone or by branch alone is one seek too (the
// newest of a whole project is the last key of bucketProjectReports):
//
//	bucketLatestName:   project id ‖ name ‖ 0 ‖ report id -> nil
//	bucketLatestBranch: project id ‖ branch ‖ 0 ‖ report id -> nil ("" for none)
//
// All three are written and removed together, in the row's transaction,
// by putLatest and deleteLatest; `reportd check` compares and repairs
// each of them (drift.go, repair.go).
var (
	bucketLatestName   = []byte("latest_name")
	bucketLatestBranch = []byte("latest_branch")
)

// latestIndex is one index of newest reports: its drift name, its bucket,
// and the key a row has in it.
type latestIndex struct {
	what   string
	bucket []byte
	key    func(project int64, row *reportRow, id int64) []byte
}

var latestIndexes = []latestIndex{
	{"latest", bucketLatest, latestKey},
	{"latest-name", bucketLatestName, func(p int64, row *reportRow, id int64) []byte {
		return append(labelPrefix(p, rowLabel(row)), idKey(id)...)
	}},
	{"latest-branch", bucketLatestBranch, func(p int64, row *reportRow, id int64) []byte {
		return append(labelPrefix(p, row.Branch), idKey(id)...)
	}},
	{"latest-name-type", bucketLatestNameType, func(p int64, row *reportRow, id int64) []byte {
		return append(nameTypePrefix(p, rowLabel(row), row.Type), idKey(id)...)
	}},
	{"latest-name-type-branch", bucketLatestNameTypeBranch, func(p int64, row *reportRow, id int64) []byte {
		return append(nameTypeBranchPrefix(p, rowLabel(row), row.Type, row.Branch), idKey(id)...)
	}},
}

// v4Indexes are the indexes of storage version 4 (buildLatestBy).
var v4Indexes = latestIndexes[1:3]

// labelPrefix is project id ‖ s ‖ 0.
func labelPrefix(project int64, s string) []byte {
	k := make([]byte, 0, 8+len(s)+1+8)
	k = append(k, idKey(project)...)
	k = append(k, s...)
	return append(k, 0)
}

// putLatest files row (report id of project) in every latest index.
func putLatest(tx *bolt.Tx, project int64, row *reportRow, id int64) error {
	for _, ix := range latestIndexes {
		if err := tx.Bucket(ix.bucket).Put(ix.key(project, row, id), nil); err != nil {
			return err
		}
	}
	return nil
}

// deleteLatest removes row's entries from every latest index.
func deleteLatest(tx *bolt.Tx, project int64, row *reportRow, id int64) error {
	for _, ix := range latestIndexes {
		if err := tx.Bucket(ix.bucket).Delete(ix.key(project, row, id)); err != nil {
			return err
		}
	}
	return nil
}

// buildLatestBy fills the version 3 indexes from the rows.
func buildLatestBy(tx *bolt.Tx) error {
	return tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
		var row reportRow
		if err := unmarshalReportRow(v, &row); err != nil {
			return err
		}
		id := int64(binary.BigEndian.Uint64(k))
		for _, ix := range v4Indexes {
			if err := tx.Bucket(ix.bucket).Put(ix.key(row.Project, &row, id), nil); err != nil {
				return fmt.Errorf("%s: %w", ix.bucket, err)
			}
		}
		return nil
	})
}

// Storage version 6 adds the identity of a report, its name and type
// (deck.pdf and deck.pptx are both "deck"), to the latest indexes:
//
//	bucketLatestNameType:       project id ‖ name ‖ 0 ‖ type ‖ 0 ‖ report id -> nil
//	bucketLatestNameTypeBranch: project id ‖ name ‖ 0 ‖ type ‖ 0 ‖ branch ‖ 0 ‖ report id -> nil
//
// so that the newest "deck" of type pdf, on any branch or on one, is one
// seek like the others. Types are lower-case words without NUL.
var (
	bucketLatestNameType       = []byte("latest_name_type")
	bucketLatestNameTypeBranch = []byte("latest_name_type_branch")
)

// v6Indexes are the indexes storage version 6 adds (buildLatestNameType).
var v6Indexes = latestIndexes[3:5]

// nameTypePrefix is project id ‖ name ‖ 0 ‖ type ‖ 0.
func nameTypePrefix(project int64, name, typ string) []byte {
	return append(append(labelPrefix(project, name), typ...), 0)
}

// nameTypeBranchPrefix is project id ‖ name ‖ 0 ‖ type ‖ 0 ‖ branch ‖ 0.
func nameTypeBranchPrefix(project int64, name, typ, branch string) []byte {
	return append(append(nameTypePrefix(project, name, typ), branch...), 0)
}

// buildLatestNameType fills the version 6 indexes from the rows.
func buildLatestNameType(tx *bolt.Tx) error {
	return tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
		var row reportRow
		if err := unmarshalReportRow(v, &row); err != nil {
			return err
		}
		id := int64(binary.BigEndian.Uint64(k))
		for _, ix := range v6Indexes {
			if err := tx.Bucket(ix.bucket).Put(ix.key(row.Project, &row, id), nil); err != nil {
				return fmt.Errorf("%s: %w", ix.bucket, err)
			}
		}
		return nil
	})
}
