// Package boltstore is the bbolt implementation of report.MetaStore.
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/reportd/reportd/internal/report"
)

// Store is a report.MetaStore on one bbolt file.
type Store struct {
	db     *bolt.DB
	clock  report.Clock
	writes *groupCommit // the writes of uploads and deletes, committed in shared transactions
}

var _ report.MetaStore = (*Store)(nil)

// Open opens (creating if needed) the store at path. A second daemon on the
// same file fails after timeout instead of waiting forever.
func Open(path string, clock report.Clock) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: locked by another process (is reportd already running?)", path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Update(initSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return newStore(db, clock), nil
}

func newStore(db *bolt.DB, clock report.Clock) *Store {
	return &Store{db: db, clock: clock, writes: &groupCommit{db: db}}
}

// SetLogger sends what the store logs (a write that panicked, with its
// stack) to log. Call it before the store is used; without it nothing is
// logged.
func (s *Store) SetLogger(log *slog.Logger) { s.writes.log = log }

// DB exposes the bbolt handle for backups and checks.
func (s *Store) DB() *bolt.DB { return s.db }

// Ping begins and ends a read transaction (report.Maintainer), or gives up
// when ctx ends; the transaction may then still be waiting on bbolt.
func (s *Store) Ping(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.db.View(func(*bolt.Tx) error { return nil }) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) Close() error { return s.db.Close() }

func storageErr(err error) error { return report.StoreError(err) }

func notFound(what string, id int64) error { return report.NoSuch(what, id) }

func (s *Store) nextSeq(bucket []byte) (int64, error) {
	var id uint64
	err := s.writes.do(func(tx *bolt.Tx) error {
		var err error
		id, err = tx.Bucket(bucket).NextSequence()
		return err
	})
	return int64(id), storageErr(err)
}

func (s *Store) NextProjectID(ctx context.Context) (int64, error) { return s.nextSeq(bucketProjects) }
func (s *Store) NextReportID(ctx context.Context) (int64, error)  { return s.nextSeq(bucketReports) }

func (s *Store) CreateProject(ctx context.Context, p report.Project) (report.Project, error) {
	base := p.Slug
	if base == "" {
		base = report.Slugify(p.Name)
	}
	var b []byte
	err := s.writes.do(func(tx *bolt.Tx) error {
		row := projectRow{Name: p.Name, Description: p.Description, Created: p.CreatedAt.Unix(), Cover: p.CoverImage}
		row.setRetention(p.Retention)
		// Storing a project id that exists already replaces its row (the
		// daemon never does; a repeated import may): its slug is released
		// first, so the project may claim it again. The slug claimed by a
		// Batch run that failed was rolled back with it.
		if old := tx.Bucket(bucketProjects).Get(idKey(p.ID)); old != nil {
			var prev projectRow
			if err := unmarshalProjectRow(old, &prev); err == nil {
				if err := dropSlug(tx, p.ID, prev.Slug); err != nil {
					return err
				}
			}
		}
		var err error
		if row.Slug, err = claimSlug(tx, p.ID, base); err != nil {
			return err
		}
		if b, err = json.Marshal(row); err != nil {
			return err
		}
		return tx.Bucket(bucketProjects).Put(idKey(p.ID), b)
	})
	if err != nil {
		return report.Project{}, storageErr(err)
	}
	out, _, err := s.decodeProject(p.ID, b)
	return out, err
}

func (s *Store) Project(ctx context.Context, id int64) (report.Project, error) {
	var p report.Project
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketProjects).Get(idKey(id))
		if b == nil {
			return notFound("project", id)
		}
		var err error
		p, _, err = s.decodeProject(id, b)
		p.TodayNewReports = todayCount(tx, id, s.dayString(s.clock.Today()))
		return err
	})
	return p, storageErr(err)
}

func (s *Store) Projects(ctx context.Context) ([]report.Project, error) {
	out := []report.Project{}
	today := s.dayString(s.clock.Today())
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketProjects)
		// The sequence is the highest id ever issued: a good first guess.
		out = make([]report.Project, 0, min(bk.Sequence(), 1<<14))
		days := newDayCounter(tx, today)
		return bk.ForEach(func(k, v []byte) error {
			id := int64(binary.BigEndian.Uint64(k))
			p, _, err := s.decodeProject(id, v)
			if err != nil {
				return err
			}
			p.TodayNewReports = days.count(id)
			out = append(out, p)
			return nil
		})
	})
	return out, storageErr(err)
}

func (s *Store) UpdateProject(ctx context.Context, id int64, c report.ProjectChange) (report.Project, *string, error) {
	var (
		p   report.Project
		old *string
	)
	err := s.db.Update(func(tx *bolt.Tx) error {
		var slugErr error
		nb, err := updateProjectRow(tx, id, func(row *projectRow) {
			if c.Slug != nil {
				if slugErr = setSlug(tx, id, row.Slug, *c.Slug); slugErr == nil {
					row.Slug = *c.Slug
				}
			}
			if c.Name != nil {
				row.Name = *c.Name
			}
			if c.Description != nil {
				row.Description = c.Description
			}
			if c.CoverImage != nil {
				old, row.Cover = row.Cover, c.CoverImage
			}
			if c.Retention != nil {
				row.setRetention(c.Retention)
			}
		})
		if err == nil {
			err = slugErr
		}
		if err != nil {
			return err
		}
		p, _, err = s.decodeProject(id, nb)
		p.TodayNewReports = todayCount(tx, id, s.dayString(s.clock.Today()))
		return err
	})
	if err != nil {
		return report.Project{}, nil, storageErr(err)
	}
	return p, old, nil
}

func (s *Store) DeleteProject(ctx context.Context, id int64) (report.Project, []report.ReportRecord, error) {
	var (
		p       report.Project
		removed []report.ReportRecord
	)
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketProjects).Get(idKey(id))
		if b == nil {
			return notFound("project", id)
		}
		var err error
		if p, _, err = s.decodeProject(id, b); err != nil {
			return err
		}
		if err := dropSlug(tx, id, p.Slug); err != nil {
			return err
		}
		reports := tx.Bucket(bucketReports)
		err = eachIndexed(tx, id, func(rid int64, key []byte) error {
			if v := reports.Get(idKey(rid)); v != nil {
				r, _, err := s.decodeReport(rid, v)
				if err != nil {
					return err
				}
				removed = append(removed, r)
			}
			if err := deleteResults(tx, rid); err != nil {
				return err
			}
			return reports.Delete(idKey(rid))
		})
		if err != nil {
			return err
		}
		if err := deletePrefix(tx.Bucket(bucketProjectReports), idKey(id)); err != nil {
			return err
		}
		if err := deletePrefix(tx.Bucket(bucketProjectDays), idKey(id)); err != nil {
			return err
		}
		for _, ix := range latestIndexes {
			if err := deletePrefix(tx.Bucket(ix.bucket), idKey(id)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketProjects).Delete(idKey(id))
	})
	if err != nil {
		return report.Project{}, nil, storageErr(err)
	}
	return p, removed, nil
}

func (s *Store) CreateReport(ctx context.Context, r report.ReportRecord) (report.ReportRecord, error) {
	r.FileContent = nil
	b, err := encodeReport(r)
	if err != nil {
		return report.ReportRecord{}, storageErr(err)
	}
	row := rowOf(r)
	day := s.dayString(s.clock.Date(r.UploadTime.Time))
	err = s.writes.do(func(tx *bolt.Tx) error {
		if err := s.bumpProject(tx, r.ProjectID, +1); err != nil {
			return err
		}
		if err := bumpDay(tx, r.ProjectID, day, +1); err != nil {
			return err
		}
		if err := tx.Bucket(bucketProjectReports).Put(pairKey(r.ProjectID, r.ID), nil); err != nil {
			return err
		}
		if err := putLatest(tx, r.ProjectID, &row, r.ID); err != nil {
			return err
		}
		if err := putResults(tx, r.ID, r.Results); err != nil {
			return err
		}
		return tx.Bucket(bucketReports).Put(idKey(r.ID), b)
	})
	if err != nil {
		return report.ReportRecord{}, storageErr(err)
	}
	out, _, err := s.decodeReport(r.ID, b)
	return out, err
}

func (s *Store) Report(ctx context.Context, id int64) (report.ReportRecord, error) {
	var r report.ReportRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReports).Get(idKey(id))
		if b == nil {
			return notFound("report", id)
		}
		var err error
		r, _, err = s.decodeReport(id, b)
		return err
	})
	return r, storageErr(err)
}

func (s *Store) Reports(ctx context.Context, projectID *int64) ([]report.ReportRecord, error) {
	out := []report.ReportRecord{}
	err := s.db.View(func(tx *bolt.Tx) error {
		reports := tx.Bucket(bucketReports)
		add := func(id int64, v []byte) error {
			r, _, err := s.decodeReport(id, v)
			if err == nil {
				out = append(out, r)
			}
			return err
		}
		if projectID == nil {
			out = make([]report.ReportRecord, 0, min(reports.Sequence(), 1<<20))
			return reports.ForEach(func(k, v []byte) error {
				return add(int64(binary.BigEndian.Uint64(k)), v)
			})
		}
		// One cursor for every lookup: Get would make one per report.
		c := reports.Cursor()
		return eachIndexed(tx, *projectID, func(rid int64, key []byte) error {
			if k, v := c.Seek(key[8:]); bytes.Equal(k, key[8:]) && v != nil {
				return add(rid, v)
			}
			return nil
		})
	})
	return out, storageErr(err)
}

func (s *Store) UpdateReport(ctx context.Context, id int64, c report.ReportChange) (report.ReportRecord, error) {
	var r report.ReportRecord
	err := s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketReports)
		b := bk.Get(idKey(id))
		if b == nil {
			return notFound("report", id)
		}
		var (
			err error
			old reportRow
		)
		if r, old, err = s.decodeReport(id, b); err != nil {
			return err
		}
		c.Apply(&r.Report)
		nb, err := encodeReport(r)
		if err != nil {
			return err
		}
		if err := deleteLatest(tx, old.Project, &old, id); err != nil {
			return err
		}
		if err := putLatest(tx, r.ProjectID, ptrTo(rowOf(r)), id); err != nil {
			return err
		}
		return bk.Put(idKey(id), nb)
	})
	return r, storageErr(err)
}

func (s *Store) DeleteReport(ctx context.Context, id int64) (report.ReportRecord, error) {
	var r report.ReportRecord
	err := s.writes.do(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketReports)
		b := bk.Get(idKey(id))
		if b == nil {
			return notFound("report", id)
		}
		var (
			err error
			row reportRow
		)
		if r, row, err = s.decodeReport(id, b); err != nil {
			return err
		}
		if err := deleteLatest(tx, row.Project, &row, id); err != nil {
			return err
		}
		if err := s.bumpProject(tx, r.ProjectID, -1); err != nil {
			return err
		}
		if err := bumpDay(tx, r.ProjectID, s.dayString(s.clock.Date(r.UploadTime.Time)), -1); err != nil {
			return err
		}
		if err := tx.Bucket(bucketProjectReports).Delete(pairKey(r.ProjectID, id)); err != nil {
			return err
		}
		if err := deleteResults(tx, id); err != nil {
			return err
		}
		return bk.Delete(idKey(id))
	})
	return r, storageErr(err)
}
