package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// Ref is one file a row refers to: a report's file (Report > 0; a site
// report's manifest) or a project's cover (Report == 0).
type Ref = report.FileRef

// walkRefs calls fn with every file a row refers to: the projects' covers,
// then the reports' files, in bucket order. It is the one walk behind
// FilePaths, Refs and SnapshotRefs.
func walkRefs(tx *bolt.Tx, fn func(Ref) error) error {
	err := tx.Bucket(bucketProjects).ForEach(func(k, v []byte) error {
		id := int64(binary.BigEndian.Uint64(k))
		var row projectRow
		if err := unmarshalProjectRow(v, &row); err != nil {
			return fmt.Errorf("project %d: %w", id, err)
		}
		if row.Cover == nil {
			return nil
		}
		return fn(Ref{Path: *row.Cover, Project: id})
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
		id := int64(binary.BigEndian.Uint64(k))
		var row reportRow
		if err := unmarshalReportRow(v, &row); err != nil {
			return fmt.Errorf("report %d: %w", id, err)
		}
		p := row.Path
		if row.Kind == report.KindSite {
			p = report.SiteManifestPath(id) // the object the row owns
		}
		return fn(Ref{Path: p, Project: row.Project, Report: id})
	})
}

// FilePaths calls fn with every file path a row refers to.
func (s *Store) FilePaths(ctx context.Context, fn func(string) error) error {
	return storageErr(s.db.View(func(tx *bolt.Tx) error {
		return walkRefs(tx, func(r Ref) error { return fn(r.Path) })
	}))
}

// Refs lists every file the metadata refers to, in bucket order.
func (s *Store) Refs(ctx context.Context) ([]report.FileRef, error) {
	var out []Ref
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = refs(tx)
		return err
	})
	return out, storageErr(err)
}

func refs(tx *bolt.Tx) ([]Ref, error) {
	var out []Ref
	err := walkRefs(tx, func(r Ref) error { out = append(out, r); return nil })
	return out, err
}

// CopyWithRefs copies the database to dst and then runs fn with the files
// its rows refer to, both inside one read transaction (ops.Snapshotter).
func (s *Store) CopyWithRefs(dst string, fn func(refs []Ref) error) error {
	return s.SnapshotRefs(func(tx *bolt.Tx, refs []Ref) error {
		if err := tx.CopyFile(dst, 0o600); err != nil {
			return fmt.Errorf("copy metadata: %w", err)
		}
		return fn(refs)
	})
}

// SnapshotRefs runs fn inside one read transaction with the files that
// transaction refers to, so a backup can copy the metadata (tx.WriteTo) and
// pin the files of exactly that state before any writer moves on.
func (s *Store) SnapshotRefs(fn func(tx *bolt.Tx, refs []Ref) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		r, err := refs(tx)
		if err != nil {
			return err
		}
		return fn(tx, r)
	})
}
