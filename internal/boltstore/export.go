package boltstore

import (
	"context"
	"encoding/binary"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// This file serves `reportd migrate`: what a copy to another store needs
// beyond the MetaStore interface.

// Sequences are the last ids handed out (0: none yet), deleted rows
// included, so that a copy never reuses one.
func (s *Store) Sequences(ctx context.Context) (project, rep int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		project = int64(tx.Bucket(bucketProjects).Sequence())
		rep = int64(tx.Bucket(bucketReports).Sequence())
		return nil
	})
	return project, rep, storageErr(err)
}

// DayCounts are the stored per-day counters, by project and day.
func (s *Store) DayCounts(ctx context.Context) ([]report.DayCount, error) {
	var out []report.DayCount
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketProjectDays).ForEach(func(k, v []byte) error {
			if len(k) < 8 || len(v) != 8 {
				return nil // not a counter (CounterDrift reports what is off)
			}
			out = append(out, report.DayCount{
				Project: int64(binary.BigEndian.Uint64(k[:8])),
				Day:     string(k[8:]),
				Count:   int64(binary.BigEndian.Uint64(v)),
			})
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Project != out[j].Project {
			return out[i].Project < out[j].Project
		}
		return out[i].Day < out[j].Day
	})
	return out, storageErr(err)
}

// AdvanceSequences moves the id sequences past project and rep (the last
// ids another store handed out), never backwards.
func (s *Store) AdvanceSequences(ctx context.Context, project, rep int64) error {
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		if err := raiseSequence(tx.Bucket(bucketProjects), project); err != nil {
			return err
		}
		return raiseSequence(tx.Bucket(bucketReports), rep)
	}))
}

// Counts is how many rows each table holds, under PostgreSQL's table
// names (report.Maintainer).
func (s *Store) Counts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := s.db.View(func(tx *bolt.Tx) error {
		for name, bk := range map[string][]byte{"projects": bucketProjects, "reports": bucketReports, "project_days": bucketProjectDays, "tokens": bucketTokens} {
			var n int64
			b := tx.Bucket(bk)
			if b == nil {
				out[name] = 0
				continue
			}
			if err := b.ForEach(func(k, v []byte) error {
				if v != nil && (name != "project_days" || len(v) != 8 || binary.BigEndian.Uint64(v) != 0) {
					n++
				}
				return nil
			}); err != nil {
				return err
			}
			out[name] = n
		}
		return nil
	})
	return out, storageErr(err)
}

var _ report.Maintainer = (*Store)(nil)
