package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock report.Clock) (report.MetaStore, func() report.MetaStore) {
		path := filepath.Join(t.TempDir(), "reportd.db")
		s, err := boltstore.Open(path, clock)
		if err != nil {
			t.Fatal(err)
		}
		cur := s
		t.Cleanup(func() { cur.Close() })
		return s, func() report.MetaStore {
			cur.Close()
			var err error
			if cur, err = boltstore.Open(path, clock); err != nil {
				t.Fatal(err)
			}
			return cur
		}
	})
}
