package boltstore

import (
	"bytes"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bumpProject adjusts the project's reportCount; NotFound if it is gone, so
// an upload racing a project delete fails instead of leaving an orphan row.
func (s *Store) bumpProject(tx *bolt.Tx, id int64, delta int64) error {
	_, err := updateProjectRow(tx, id, func(row *projectRow) {
		row.Count = max(row.Count+delta, 0)
	})
	return err
}

func bumpDay(tx *bolt.Tx, project int64, day string, delta int64) error {
	bk := tx.Bucket(bucketProjectDays)
	k := dayKey(project, day)
	n := int64(0)
	if v := bk.Get(k); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += delta
	if n <= 0 {
		return bk.Delete(k)
	}
	return bk.Put(k, u64(uint64(n)))
}

func todayCount(tx *bolt.Tx, project int64, day string) int64 {
	if v := tx.Bucket(bucketProjectDays).Get(dayKey(project, day)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func (s *Store) dayString(d time.Time) string { return d.Format("20060102") }

// dayCounter answers todayCount for many projects in one transaction
// with one cursor and one key buffer: opening the bucket and a cursor per
// project was most of the cost of listing 1,000 projects.
type dayCounter struct {
	c   *bolt.Cursor
	key []byte
}

func newDayCounter(tx *bolt.Tx, day string) *dayCounter {
	key := make([]byte, 8, 8+len(day))
	return &dayCounter{c: tx.Bucket(bucketProjectDays).Cursor(), key: append(key, day...)}
}

func (d *dayCounter) count(project int64) int64 {
	binary.BigEndian.PutUint64(d.key, uint64(project))
	if k, v := d.c.Seek(d.key); bytes.Equal(k, d.key) && len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// eachIndexed walks one project's report ids in id order.
func eachIndexed(tx *bolt.Tx, project int64, fn func(rid int64, key []byte) error) error {
	prefix := idKey(project)
	c := tx.Bucket(bucketProjectReports).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if err := fn(int64(binary.BigEndian.Uint64(k[8:])), k); err != nil {
			return err
		}
	}
	return nil
}

func deletePrefix(bk *bolt.Bucket, prefix []byte) error {
	var keys [][]byte
	c := bk.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := bk.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
