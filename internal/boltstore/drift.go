package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// This file and repair.go serve `reportd check`: they compare the derived
// data (counters, the per-project index) with the rows they are derived
// from, and repair it. They never run while the daemon serves.

// Drift is one place where derived metadata disagrees with the rows.
type Drift = report.Drift

// CounterDrift compares reportCount, the per-day counters and the project
// index with the report rows.
func (s *Store) CounterDrift(ctx context.Context) ([]Drift, error) {
	var out []Drift
	err := s.db.View(func(tx *bolt.Tx) error {
		c := s.newDriftCheck(tx)
		err := c.run()
		out = c.found
		return err
	})
	return out, storageErr(err)
}

// driftCheck derives the counters and index from the report rows in one
// transaction, records every disagreement in found, and remembers what
// fix (repair.go) must change.
type driftCheck struct {
	s                              *Store
	projects, reports, index, days *bolt.Bucket
	latest                         []*bolt.Bucket // by latestIndexes; nil: not there yet
	results                        *bolt.Bucket   // nil: not there yet

	found []Drift

	count    map[int64]int64  // project → reports
	dayCount map[string]int64 // string(dayKey) → reports
	dayKeys  []string         // stored or derived day keys, sorted
	stored   map[string]int64 // string(dayKey) → stored count, -1 if malformed

	orphanRows  [][]byte     // report keys whose project is gone
	dangling    [][]byte     // index keys that point nowhere
	staleLatest []staleKey   // latest index keys that match no row
	lostResults [][]byte     // results keys whose report row is gone
	recounted   []projectFix // projects whose reportCount is wrong
}

type staleKey struct {
	index int // in latestIndexes
	key   []byte
}

type projectFix struct {
	id    int64
	count int64
}

func (s *Store) newDriftCheck(tx *bolt.Tx) *driftCheck {
	return &driftCheck{
		s:        s,
		projects: tx.Bucket(bucketProjects),
		reports:  tx.Bucket(bucketReports),
		index:    tx.Bucket(bucketProjectReports),
		days:     tx.Bucket(bucketProjectDays),
		latest:   latestBuckets(tx),
		results:  tx.Bucket(bucketResults),
		count:    map[int64]int64{},
		dayCount: map[string]int64{},
		stored:   map[string]int64{},
	}
}

// run finds every drift, in the order reports, index, results, projects,
// days.
func (c *driftCheck) run() error {
	if err := c.scanReports(); err != nil {
		return err
	}
	c.scanIndex()
	c.scanLatest()
	c.scanResults()
	if err := c.scanProjects(); err != nil {
		return err
	}
	c.scanDays()
	return nil
}

// scanReports counts each project's reports (per project and per day) and
// notes rows whose project is gone and rows missing from the index.
func (c *driftCheck) scanReports() error {
	return c.reports.ForEach(func(k, v []byte) error {
		rid := int64(binary.BigEndian.Uint64(k))
		var row reportRow
		if err := unmarshalReportRow(v, &row); err != nil {
			return fmt.Errorf("report %d: %w", rid, err)
		}
		if c.projects.Get(idKey(row.Project)) == nil {
			c.found = append(c.found, Drift{What: "report-without-project", Project: row.Project, Report: rid})
			c.orphanRows = append(c.orphanRows, append([]byte(nil), k...))
			return nil
		}
		c.count[row.Project]++
		day := c.s.dayString(c.s.clock.Date(time.Unix(row.Uploaded, 0)))
		c.dayCount[string(dayKey(row.Project, day))]++
		if c.index.Get(pairKey(row.Project, rid)) == nil {
			c.found = append(c.found, Drift{What: "index-missing", Project: row.Project, Report: rid})
		}
		for i, ix := range latestIndexes {
			if c.latest[i] != nil && c.latest[i].Get(ix.key(row.Project, &row, rid)) == nil {
				c.found = append(c.found, Drift{What: ix.what + "-missing", Project: row.Project, Report: rid})
			}
		}
		return nil
	})
}

// scanIndex notes index entries that are malformed or point to a report
// that is gone or belongs to another project.
func (c *driftCheck) scanIndex() {
	cur := c.index.Cursor()
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		if len(k) != 16 {
			c.dangling = append(c.dangling, append([]byte(nil), k...))
			continue
		}
		p, rid := int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[8:]))
		v := c.reports.Get(idKey(rid))
		ok := v != nil && c.projects.Get(idKey(p)) != nil
		if ok {
			var row reportRow
			ok = unmarshalReportRow(v, &row) == nil && row.Project == p
		}
		if !ok {
			c.found = append(c.found, Drift{What: "index-dangling", Project: p, Report: rid})
			c.dangling = append(c.dangling, append([]byte(nil), k...))
		}
	}
}

// scanLatest notes keys of each latest index that are not exactly the
// key of an existing row of an existing project.
func (c *driftCheck) scanLatest() {
	for i, ix := range latestIndexes {
		if c.latest[i] == nil { // an old store opened read-only: no index yet
			continue
		}
		cur := c.latest[i].Cursor()
		for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
			ok, p, rid := false, int64(0), int64(0)
			if len(k) >= 17 {
				p, rid = int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[len(k)-8:]))
				if v := c.reports.Get(idKey(rid)); v != nil && c.projects.Get(idKey(p)) != nil {
					var row reportRow
					ok = unmarshalReportRow(v, &row) == nil && bytes.Equal(ix.key(row.Project, &row, rid), k)
				}
			}
			if !ok {
				c.found = append(c.found, Drift{What: ix.what + "-dangling", Project: p, Report: rid})
				c.staleLatest = append(c.staleLatest, staleKey{i, append([]byte(nil), k...)})
			}
		}
	}
}

// scanResults notes per-test results (results.go) kept for a report row
// that does not exist. Results of a row whose project is gone go with
// that row (fix).
func (c *driftCheck) scanResults() {
	if c.results == nil {
		return
	}
	cur := c.results.Cursor()
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		if c.reports.Get(k) != nil {
			continue
		}
		rid := int64(0)
		if len(k) == 8 {
			rid = int64(binary.BigEndian.Uint64(k))
		}
		c.found = append(c.found, Drift{What: "results-dangling", Report: rid})
		c.lostResults = append(c.lostResults, append([]byte(nil), k...))
	}
}

// latestBuckets are the buckets of latestIndexes, nil where missing.
func latestBuckets(tx *bolt.Tx) []*bolt.Bucket {
	out := make([]*bolt.Bucket, len(latestIndexes))
	for i, ix := range latestIndexes {
		out[i] = tx.Bucket(ix.bucket)
	}
	return out
}

// scanProjects compares each project's reportCount with the real count.
func (c *driftCheck) scanProjects() error {
	return c.projects.ForEach(func(k, v []byte) error {
		id := int64(binary.BigEndian.Uint64(k))
		var row projectRow
		if err := unmarshalProjectRow(v, &row); err != nil {
			return fmt.Errorf("project %d: %w", id, err)
		}
		if row.Count != c.count[id] {
			c.found = append(c.found, Drift{What: "reportCount", Project: id, Stored: row.Count, Actual: c.count[id]})
			c.recounted = append(c.recounted, projectFix{id: id, count: c.count[id]})
		}
		return nil
	})
}

// scanDays compares the stored per-day counters with the derived ones,
// over the keys of both, in key order.
func (c *driftCheck) scanDays() {
	cur := c.days.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		n := int64(-1)
		if len(v) == 8 {
			n = int64(binary.BigEndian.Uint64(v))
		}
		c.stored[string(k)] = n
	}
	keys := map[string]bool{}
	for k := range c.stored {
		keys[k] = true
	}
	for k := range c.dayCount {
		keys[k] = true
	}
	for k := range keys {
		c.dayKeys = append(c.dayKeys, k)
	}
	slices.Sort(c.dayKeys)
	for _, k := range c.dayKeys {
		have, want := c.stored[k], c.dayCount[k]
		if have == want {
			continue
		}
		kb := []byte(k)
		d := Drift{What: "dayCount", Stored: max(have, 0), Actual: want}
		if len(kb) > 8 {
			d.Project, d.Day = int64(binary.BigEndian.Uint64(kb[:8])), string(kb[8:])
		}
		c.found = append(c.found, d)
	}
}
