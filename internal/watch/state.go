package watch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The state file's buckets. Keys of published, queue and failed are
// absolute file paths; keys of deletes are report ids.
var (
	bucketMeta      = []byte("meta")      // "version" → schemaVersion
	bucketPublished = []byte("published") // what went out, so a restart publishes nothing twice
	bucketQueue     = []byte("queue")     // seen but not yet published, so an outage or a restart loses nothing
	bucketFailed    = []byte("failed")    // rejected --max-attempts times; retried only when the content changes
	bucketDeletes   = []byte("deletes")   // --replace deletions still owed to the server
	bucketBySHA     = []byte("bysha")     // sha256 + "\x00" + path → "": finds a published file that moved
)

const schemaVersion = "1"

// published records one file that went out.
type published struct {
	Size      int64     `json:"size"`
	MTime     int64     `json:"mtimeNs"`
	SHA256    string    `json:"sha256"`
	ReportID  int64     `json:"reportId"`
	ProjectID int64     `json:"projectId"`
	At        time.Time `json:"publishedAt"`
	// Files is set for a site folder (--sites): how many files it held.
	// A site's Size and MTime are its fingerprint (sites.go), its SHA256
	// the tree hash of its files (dirzip).
	Files int `json:"files,omitempty"`
}

// queued is a file waiting to be published; Rejections counts the server's
// validation refusals across restarts for --max-attempts.
type queued struct {
	Seen       time.Time  `json:"seen"`
	Tries      int        `json:"tries,omitempty"`
	Rejections int        `json:"rejections,omitempty"`
	LastError  string     `json:"lastError,omitempty"`
	Uploading  *uploading `json:"uploading,omitempty"`
}

// uploading marks an upload that was started and whose outcome is unknown
// (the watcher was killed, or the response was lost). Before uploading that
// file again the watcher looks for the report on the server (reconcile.go).
type uploading struct {
	SHA256    string    `json:"sha256"`
	Size      int64     `json:"size"`
	ProjectID int64     `json:"projectId"`
	Started   time.Time `json:"started"`
	After     int64     `json:"after,omitempty"` // the report id this upload replaces, if any
}

type failed struct {
	Size   int64     `json:"size"`
	MTime  int64     `json:"mtimeNs"`
	SHA256 string    `json:"sha256"`
	Error  string    `json:"error"`
	At     time.Time `json:"at"`
}

type store struct{ db *bolt.DB }

// openStore opens (creating) the state file. bbolt locks it: a watcher
// started while the previous one is still draining waits up to lockWait for
// it; a second watcher on the same file then fails instead of waiting forever.
func openStore(path string, lockWait time.Duration) (*store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("state file %s is in use by another watcher", path)
	}
	if err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	// Workers' commits are batched (one fsync for several files); the
	// default 10ms wait for a batch to fill would cost each upload 10ms.
	db.MaxBatchDelay = 2 * time.Millisecond
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketPublished, bucketQueue, bucketFailed, bucketDeletes} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if tx.Bucket(bucketBySHA) == nil {
			// Added after schema 1 shipped: build it from the records.
			if err := rebuildBySHA(tx); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		switch v := string(meta.Get([]byte("version"))); v {
		case "":
			return meta.Put([]byte("version"), []byte(schemaVersion))
		case schemaVersion:
			return nil
		default:
			return fmt.Errorf("state file has schema version %s, this reportctl knows %s", v, schemaVersion)
		}
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return &store{db: db}, nil
}

func (s *store) close() error { return s.db.Close() }

func getJSON[T any](tx *bolt.Tx, bucket []byte, key string) (T, bool) {
	var v T
	b := tx.Bucket(bucket).Get([]byte(key))
	if b == nil || json.Unmarshal(b, &v) != nil {
		return v, false
	}
	return v, true
}

func putJSON(tx *bolt.Tx, bucket []byte, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket(bucket).Put([]byte(key), b)
}

func (s *store) published(path string) (rec published, ok bool) {
	_ = s.db.View(func(tx *bolt.Tx) error {
		rec, ok = getJSON[published](tx, bucketPublished, path)
		return nil
	})
	return rec, ok
}

func (s *store) failedRec(path string) (rec failed, ok bool) {
	_ = s.db.View(func(tx *bolt.Tx) error {
		rec, ok = getJSON[failed](tx, bucketFailed, path)
		return nil
	})
	return rec, ok
}

// fileStats returns size and mtime of every published or failed file, so a
// rescan can skip files that have not changed without touching the disk
// twice or the server at all.
func (s *store) fileStats() map[string]stat {
	out := map[string]stat{}
	_ = s.db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketFailed, bucketPublished} {
			_ = tx.Bucket(b).ForEach(func(k, v []byte) error {
				var r struct {
					Size  int64 `json:"size"`
					MTime int64 `json:"mtimeNs"`
				}
				if json.Unmarshal(v, &r) == nil {
					out[string(k)] = stat{size: r.Size, mtime: r.MTime}
				}
				return nil
			})
		}
		return nil
	})
	return out
}

// counts returns how many files the state holds as published, queued and
// given up.
func (s *store) counts() (published, queued, failed int) {
	_ = s.db.View(func(tx *bolt.Tx) error {
		published = tx.Bucket(bucketPublished).Stats().KeyN
		queued = tx.Bucket(bucketQueue).Stats().KeyN
		failed = tx.Bucket(bucketFailed).Stats().KeyN
		return nil
	})
	return
}

// markPublished records a publication and clears the file's queue and
// failure entries in one transaction. Batch lets concurrent workers share a
// commit (and its fsync); the function is idempotent as Batch requires.
func (s *store) markPublished(path string, rec published) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		if old, ok := getJSON[published](tx, bucketPublished, path); ok {
			_ = tx.Bucket(bucketBySHA).Delete(shaKey(old.SHA256, path))
		}
		if err := tx.Bucket(bucketBySHA).Put(shaKey(rec.SHA256, path), []byte{}); err != nil {
			return err
		}
		if err := putJSON(tx, bucketPublished, path, rec); err != nil {
			return err
		}
		_ = tx.Bucket(bucketFailed).Delete([]byte(path))
		return tx.Bucket(bucketQueue).Delete([]byte(path))
	})
}

// touchPublished updates the size and mtime of a published file whose
// content did not change (touched, or copied over with the same bytes).
func (s *store) touchPublished(path string, size, mtime int64) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		rec, ok := getJSON[published](tx, bucketPublished, path)
		if !ok {
			return nil
		}
		rec.Size, rec.MTime = size, mtime
		_ = tx.Bucket(bucketQueue).Delete([]byte(path))
		return putJSON(tx, bucketPublished, path, rec)
	})
}

func (s *store) markFailed(path string, rec failed) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		if err := putJSON(tx, bucketFailed, path, rec); err != nil {
			return err
		}
		return tx.Bucket(bucketQueue).Delete([]byte(path))
	})
}

// enqueue records paths as waiting, keeping existing entries (and their
// counts) as they are.
func (s *store) enqueue(paths []string, now time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketQueue)
		for _, p := range paths {
			if b.Get([]byte(p)) != nil {
				continue
			}
			if err := putJSON(tx, bucketQueue, p, queued{Seen: now}); err != nil {
				return err
			}
		}
		return nil
	})
}

// queuedRec returns path's queue entry.
func (s *store) queuedRec(path string) (rec queued, ok bool) {
	_ = s.db.View(func(tx *bolt.Tx) error {
		rec, ok = getJSON[queued](tx, bucketQueue, path)
		return nil
	})
	return rec, ok
}

// markUploading records that an upload of path is about to start.
func (s *store) markUploading(path string, u uploading) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		q, ok := getJSON[queued](tx, bucketQueue, path)
		if !ok {
			q = queued{Seen: u.Started}
		}
		q.Uploading = &u
		return putJSON(tx, bucketQueue, path, q)
	})
}

// noteFailure counts one more try (and a rejection when rejected) for path
// and returns the updated entry. The uploading mark is kept only when the
// outcome is unknown (unsure): a refusal means nothing was stored.
func (s *store) noteFailure(path string, rejected, unsure bool, msg string, now time.Time) (queued, error) {
	var out queued
	err := s.db.Batch(func(tx *bolt.Tx) error {
		q, ok := getJSON[queued](tx, bucketQueue, path)
		if !ok {
			q = queued{Seen: now}
		}
		q.Tries++
		if rejected {
			q.Rejections++
		}
		q.LastError = msg
		if !unsure {
			q.Uploading = nil
		}
		out = q
		return putJSON(tx, bucketQueue, path, q)
	})
	return out, err
}

func (s *store) dequeue(path string) error {
	return s.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucketQueue).Delete([]byte(path)) })
}

func (s *store) queue() map[string]queued {
	out := map[string]queued{}
	_ = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEach(func(k, v []byte) error {
			var q queued
			if json.Unmarshal(v, &q) == nil {
				out[string(k)] = q
			}
			return nil
		})
	})
	return out
}

func idKey(id int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(id)) }

// oweDelete remembers a --replace deletion that could not be done yet.
func (s *store) oweDelete(id int64) error {
	return s.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucketDeletes).Put(idKey(id), []byte{}) })
}

func (s *store) paidDelete(id int64) error {
	return s.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucketDeletes).Delete(idKey(id)) })
}

func (s *store) owedDeletes() []int64 {
	var out []int64
	_ = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDeletes).ForEach(func(k, _ []byte) error {
			out = append(out, int64(binary.BigEndian.Uint64(k)))
			return nil
		})
	})
	return out
}

// stat is the cheap identity of a file's version: size and mtime in ns.
type stat struct{ size, mtime int64 }

func shaKey(sum, path string) []byte { return []byte(sum + "\x00" + path) }

func rebuildBySHA(tx *bolt.Tx) error {
	idx, err := tx.CreateBucket(bucketBySHA)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketPublished).ForEach(func(k, v []byte) error {
		var rec published
		if json.Unmarshal(v, &rec) != nil {
			return nil
		}
		return idx.Put(shaKey(rec.SHA256, string(k)), []byte{})
	})
}

// pathsWithSHA lists the published paths whose content hashes to sum.
func (s *store) pathsWithSHA(sum string) []string {
	var out []string
	prefix := []byte(sum + "\x00")
	_ = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketBySHA).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			out = append(out, string(k[len(prefix):]))
		}
		return nil
	})
	return out
}

// moved re-keys the record of a published file that was renamed or moved
// within the watched folders, so that it is not published again.
func (s *store) moved(from, to string, size, mtime int64) (published, error) {
	var rec published
	err := s.db.Batch(func(tx *bolt.Tx) error {
		r, ok := getJSON[published](tx, bucketPublished, from)
		if !ok {
			return fmt.Errorf("no record of %s", from)
		}
		_ = tx.Bucket(bucketPublished).Delete([]byte(from))
		_ = tx.Bucket(bucketBySHA).Delete(shaKey(r.SHA256, from))
		r.Size, r.MTime = size, mtime
		rec = r
		if err := tx.Bucket(bucketBySHA).Put(shaKey(r.SHA256, to), []byte{}); err != nil {
			return err
		}
		_ = tx.Bucket(bucketQueue).Delete([]byte(to))
		return putJSON(tx, bucketPublished, to, r)
	})
	return rec, err
}
