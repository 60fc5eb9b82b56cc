package boltstore

import (
	"context"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// Recount fixes every drift CounterDrift finds, in one transaction: counters
// and the index are rebuilt from the rows, and rows whose project is gone
// are dropped with their per-test results (their files become orphans for
// the caller to remove), as are results whose report row is gone. It
// returns what it fixed.
func (s *Store) Recount(ctx context.Context) ([]Drift, error) {
	var out []Drift
	err := s.db.Update(func(tx *bolt.Tx) error {
		c := s.newDriftCheck(tx)
		if err := c.run(); err != nil {
			return err
		}
		out = c.found
		return c.fix(tx)
	})
	return out, storageErr(err)
}

// fix overwrites the derived data with what run derived from the rows.
func (c *driftCheck) fix(tx *bolt.Tx) error {
	for _, k := range c.orphanRows {
		if err := c.reports.Delete(k); err != nil {
			return err
		}
		if c.results != nil {
			if err := c.results.Delete(k); err != nil {
				return err
			}
		}
	}
	for _, k := range c.lostResults {
		if err := c.results.Delete(k); err != nil {
			return err
		}
	}
	for _, k := range c.dangling {
		if err := c.index.Delete(k); err != nil {
			return err
		}
	}
	for _, st := range c.staleLatest {
		if err := c.latest[st.index].Delete(st.key); err != nil {
			return err
		}
	}
	err := c.reports.ForEach(func(k, v []byte) error {
		var row reportRow
		if err := unmarshalReportRow(v, &row); err != nil {
			return err
		}
		rid := int64(binary.BigEndian.Uint64(k))
		for i, ix := range latestIndexes {
			if lk := ix.key(row.Project, &row, rid); c.latest[i].Get(lk) == nil {
				if err := c.latest[i].Put(lk, nil); err != nil {
					return err
				}
			}
		}
		pk := pairKey(row.Project, rid)
		if c.index.Get(pk) == nil {
			return c.index.Put(pk, nil)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range c.recounted {
		if _, err := updateProjectRow(tx, p.id, func(row *projectRow) { row.Count = p.count }); err != nil {
			return err
		}
	}
	for _, k := range c.dayKeys {
		n := c.dayCount[k]
		switch {
		case c.stored[k] == n:
		case n == 0:
			err = c.days.Delete([]byte(k))
		default:
			err = c.days.Put([]byte(k), u64(uint64(n)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DropReports deletes report rows whose files are gone, with their index
// entries; call Recount afterwards to settle the counters.
func (s *Store) DropReports(ctx context.Context, ids []int64) error {
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		reports := tx.Bucket(bucketReports)
		for _, id := range ids {
			v := reports.Get(idKey(id))
			if v == nil {
				continue
			}
			var row reportRow
			if err := unmarshalReportRow(v, &row); err != nil {
				return err
			}
			if err := tx.Bucket(bucketProjectReports).Delete(pairKey(row.Project, id)); err != nil {
				return err
			}
			if err := deleteLatest(tx, row.Project, &row, id); err != nil {
				return err
			}
			if err := deleteResults(tx, id); err != nil {
				return err
			}
			if err := reports.Delete(idKey(id)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// ClearCover unsets a project's cover whose file is gone; a project that is
// gone too needs nothing.
func (s *Store) ClearCover(ctx context.Context, project int64) error {
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		_, err := updateProjectRow(tx, project, func(row *projectRow) { row.Cover = nil })
		if report.IsKind(err, report.NotFound) {
			return nil
		}
		return err
	}))
}
