package boltstore

import (
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// A store written by a newer reportd is refused rather than misread.
func TestNewerStorageVersionRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	s.DB().Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyStorageVersion, u64(storageVersion+1))
	})
	s.Close()
	if _, err := Open(path, report.Clock{}); err == nil || !strings.Contains(err.Error(), "storage version") {
		t.Fatalf("open newer store: %v", err)
	}
}

func TestSchemaCreatesEveryBucket(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.DB().View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		return nil
	})
}
