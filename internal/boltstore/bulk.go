package boltstore

import (
	"context"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// bulkChunk bounds one transaction's dirty pages, so a big load neither
// holds all of them in memory nor pays one fsync per row.
const bulkChunk = 20000

// BulkLoad stores projects and then reports with the ids they carry, in a
// few large transactions, keeping the index, the counters and the id
// sequences exactly as CreateProject and CreateReport would. It is for
// seeding (benchmarks, imports) into a store no daemon is serving; the
// rows are not validated beyond what the store itself needs.
func (s *Store) BulkLoad(ctx context.Context, projects []report.Project, reports []report.ReportRecord) error {
	for len(projects) > 0 {
		n := min(len(projects), bulkChunk)
		if err := s.db.Update(func(tx *bolt.Tx) error { return s.loadProjects(tx, projects[:n]) }); err != nil {
			return storageErr(err)
		}
		projects = projects[n:]
	}
	for len(reports) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(reports), bulkChunk)
		if err := s.db.Update(func(tx *bolt.Tx) error { return s.loadReports(tx, reports[:n]) }); err != nil {
			return storageErr(err)
		}
		reports = reports[n:]
	}
	return nil
}

func (s *Store) loadProjects(tx *bolt.Tx, ps []report.Project) error {
	bk := tx.Bucket(bucketProjects)
	for _, p := range ps {
		row := projectRow{Name: p.Name, Description: p.Description, Created: p.CreatedAt.Unix(), Cover: p.CoverImage}
		row.setRetention(p.Retention)
		base := p.Slug
		if base == "" {
			base = report.Slugify(p.Name)
		}
		var err error
		if row.Slug, err = claimSlug(tx, p.ID, base); err != nil {
			return err
		}
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		if err := bk.Put(idKey(p.ID), b); err != nil {
			return err
		}
		if err := raiseSequence(bk, p.ID); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) loadReports(tx *bolt.Tx, rs []report.ReportRecord) error {
	bk := tx.Bucket(bucketReports)
	index := tx.Bucket(bucketProjectReports)
	for _, r := range rs {
		b, err := encodeReport(r)
		if err != nil {
			return err
		}
		if err := s.bumpProject(tx, r.ProjectID, +1); err != nil {
			return err
		}
		if err := bumpDay(tx, r.ProjectID, s.dayString(s.clock.Date(r.UploadTime.Time)), +1); err != nil {
			return err
		}
		if err := index.Put(pairKey(r.ProjectID, r.ID), nil); err != nil {
			return err
		}
		if err := putLatest(tx, r.ProjectID, ptrTo(rowOf(r)), r.ID); err != nil {
			return err
		}
		if r.Results != nil {
			if err := putResults(tx, r.ID, r.Results); err != nil {
				return err
			}
		}
		if err := bk.Put(idKey(r.ID), b); err != nil {
			return err
		}
		if err := raiseSequence(bk, r.ID); err != nil {
			return err
		}
	}
	return nil
}

// raiseSequence makes sure the next reserved id is past id.
func raiseSequence(bk *bolt.Bucket, id int64) error {
	if uint64(id) > bk.Sequence() {
		return bk.SetSequence(uint64(id))
	}
	return nil
}
