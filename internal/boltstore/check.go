package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/reportd/reportd/internal/report"
)

// This file serves `reportd check`: it compares the derived data (counters,
// the per-project index) with the rows they are derived from, and lists the
// files the rows refer to. It never runs while the daemon serves.

// Ref is one file a row refers to: a report's file (Report > 0) or a
// project's cover (Report == 0).
type Ref struct {
	Path    string
	Project int64
	Report  int64
}

// Refs lists every file the metadata refers to, in bucket order.
func (s *Store) Refs(ctx context.Context) ([]Ref, error) {
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
	err := tx.Bucket(bucketProjects).ForEach(func(k, v []byte) error {
		var row projectRow
		if err := json.Unmarshal(v, &row); err != nil {
			return fmt.Errorf("project %d: %w", binary.BigEndian.Uint64(k), err)
		}
		if row.Cover != nil {
			out = append(out, Ref{Path: *row.Cover, Project: int64(binary.BigEndian.Uint64(k))})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
		var row reportRow
		if err := json.Unmarshal(v, &row); err != nil {
			return fmt.Errorf("report %d: %w", binary.BigEndian.Uint64(k), err)
		}
		out = append(out, Ref{Path: row.Path, Project: row.Project, Report: int64(binary.BigEndian.Uint64(k))})
		return nil
	})
	return out, err
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

// Drift is one place where derived metadata disagrees with the rows.
type Drift struct {
	What    string // "reportCount", "dayCount", "index-missing", "index-dangling", "report-without-project"
	Project int64
	Report  int64
	Day     string // YYYYMMDD for dayCount
	Stored  int64
	Actual  int64
}

func (d Drift) String() string {
	switch d.What {
	case "reportCount":
		return fmt.Sprintf("project %d: reportCount is %d, real count %d", d.Project, d.Stored, d.Actual)
	case "dayCount":
		return fmt.Sprintf("project %d: %d reports counted on %s, real count %d", d.Project, d.Stored, d.Day, d.Actual)
	case "index-missing":
		return fmt.Sprintf("project %d: report %d is missing from the project index", d.Project, d.Report)
	case "index-dangling":
		return fmt.Sprintf("project %d: index entry for report %d, which is not the project's", d.Project, d.Report)
	case "report-without-project":
		return fmt.Sprintf("report %d: its project %d does not exist", d.Report, d.Project)
	}
	return d.What
}

// CounterDrift compares reportCount, the per-day counters and the project
// index with the report rows.
func (s *Store) CounterDrift(ctx context.Context) ([]Drift, error) {
	var out []Drift
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = s.drift(tx, false)
		return err
	})
	return out, storageErr(err)
}

// Recount fixes every drift CounterDrift finds, in one transaction: counters
// and the index are rebuilt from the rows, and rows whose project is gone
// are dropped (their files become orphans for the caller to remove). It
// returns what it fixed.
func (s *Store) Recount(ctx context.Context) ([]Drift, error) {
	var out []Drift
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		out, err = s.drift(tx, true)
		return err
	})
	return out, storageErr(err)
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
			if err := json.Unmarshal(v, &row); err != nil {
				return err
			}
			if err := tx.Bucket(bucketProjectReports).Delete(pairKey(row.Project, id)); err != nil {
				return err
			}
			if err := reports.Delete(idKey(id)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// ClearCover unsets a project's cover whose file is gone.
func (s *Store) ClearCover(ctx context.Context, project int64) error {
	return storageErr(s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketProjects)
		v := bk.Get(idKey(project))
		if v == nil {
			return nil
		}
		var row projectRow
		if err := json.Unmarshal(v, &row); err != nil {
			return err
		}
		row.Cover = nil
		nb, err := json.Marshal(row)
		if err != nil {
			return err
		}
		return bk.Put(idKey(project), nb)
	}))
}

// drift derives the counters and index from the report rows and compares
// (and with fix, overwrites) what is stored.
func (s *Store) drift(tx *bolt.Tx, fix bool) ([]Drift, error) {
	var out []Drift
	projects := tx.Bucket(bucketProjects)
	reports := tx.Bucket(bucketReports)
	index := tx.Bucket(bucketProjectReports)
	days := tx.Bucket(bucketProjectDays)

	count := map[int64]int64{}
	dayCount := map[string]int64{} // string(dayKey) -> n
	var orphanRows [][]byte
	err := reports.ForEach(func(k, v []byte) error {
		var row reportRow
		if err := json.Unmarshal(v, &row); err != nil {
			return fmt.Errorf("report %d: %w", binary.BigEndian.Uint64(k), err)
		}
		rid := int64(binary.BigEndian.Uint64(k))
		if projects.Get(idKey(row.Project)) == nil {
			out = append(out, Drift{What: "report-without-project", Project: row.Project, Report: rid})
			orphanRows = append(orphanRows, append([]byte(nil), k...))
			return nil
		}
		count[row.Project]++
		day := s.dayString(s.clock.Date(time.Unix(row.Uploaded, 0)))
		dayCount[string(dayKey(row.Project, day))]++
		if index.Get(pairKey(row.Project, rid)) == nil {
			out = append(out, Drift{What: "index-missing", Project: row.Project, Report: rid})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	var dangling [][]byte
	c := index.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 16 {
			dangling = append(dangling, append([]byte(nil), k...))
			continue
		}
		p, rid := int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[8:]))
		v := reports.Get(idKey(rid))
		ok := v != nil && projects.Get(idKey(p)) != nil
		if ok {
			var row reportRow
			ok = json.Unmarshal(v, &row) == nil && row.Project == p
		}
		if !ok {
			out = append(out, Drift{What: "index-dangling", Project: p, Report: rid})
			dangling = append(dangling, append([]byte(nil), k...))
		}
	}

	var projectFixes []func() error
	err = projects.ForEach(func(k, v []byte) error {
		var row projectRow
		if err := json.Unmarshal(v, &row); err != nil {
			return fmt.Errorf("project %d: %w", binary.BigEndian.Uint64(k), err)
		}
		id := int64(binary.BigEndian.Uint64(k))
		if row.Count != count[id] {
			out = append(out, Drift{What: "reportCount", Project: id, Stored: row.Count, Actual: count[id]})
			row.Count = count[id]
			key := append([]byte(nil), k...)
			projectFixes = append(projectFixes, func() error {
				nb, err := json.Marshal(row)
				if err != nil {
					return err
				}
				return projects.Put(key, nb)
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	stored := map[string]int64{}
	c = days.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n := int64(-1)
		if len(v) == 8 {
			n = int64(binary.BigEndian.Uint64(v))
		}
		stored[string(k)] = n
	}
	keys := map[string]bool{}
	for k := range stored {
		keys[k] = true
	}
	for k := range dayCount {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		have, want := stored[k], dayCount[k]
		if have == want {
			continue
		}
		kb := []byte(k)
		d := Drift{What: "dayCount", Stored: max(have, 0), Actual: want}
		if len(kb) > 8 {
			d.Project, d.Day = int64(binary.BigEndian.Uint64(kb[:8])), string(kb[8:])
		}
		out = append(out, d)
	}

	if !fix {
		return out, nil
	}
	for _, k := range orphanRows {
		if err := reports.Delete(k); err != nil {
			return nil, err
		}
	}
	for _, k := range dangling {
		if err := index.Delete(k); err != nil {
			return nil, err
		}
	}
	err = reports.ForEach(func(k, v []byte) error {
		var row reportRow
		if err := json.Unmarshal(v, &row); err != nil {
			return err
		}
		pk := pairKey(row.Project, int64(binary.BigEndian.Uint64(k)))
		if index.Get(pk) == nil {
			return index.Put(pk, nil)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range projectFixes {
		if err := f(); err != nil {
			return nil, err
		}
	}
	for _, k := range sorted {
		if stored[k] == dayCount[k] {
			continue
		}
		if dayCount[k] == 0 {
			if err := days.Delete([]byte(k)); err != nil {
				return nil, err
			}
		} else if err := days.Put([]byte(k), u64(uint64(dayCount[k]))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// OpenReadOnly opens an existing store for reading only (a shared lock that
// a running daemon's exclusive one excludes), for offline backups and checks.
func OpenReadOnly(path string, clock report.Clock, timeout time.Duration) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Store{db: db, clock: clock}, nil
}

// ErrLocked means another process (a running reportd) holds the store.
var ErrLocked = errors.New("locked by another process (is reportd running?)")
