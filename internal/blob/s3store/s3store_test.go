package s3store_test

import (
	"context"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/blobtest"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// testPartSize is S3's minimum, so the suite's 64 MiB object is a
// 13-part upload and one part buffer stays under its allocation bound.
const testPartSize = s3store.MinPartSize

func newStore(t *testing.T, prefix string) *s3store.Store {
	t.Helper()
	cfg := s3test.Bucket(t)
	cfg.Prefix = prefix
	cfg.PartSize = testPartSize
	s, err := s3store.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func uploads(t *testing.T, s blob.Store) []string {
	t.Helper()
	ups, err := s.(*s3store.Store).Uploads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range ups {
		keys = append(keys, u.Key+" "+u.UploadID)
	}
	return keys
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newStore(t, "") }, blobtest.Options{Incomplete: uploads})
}

// The same suite with the store's objects under a prefix of the bucket.
func TestConformancePrefixed(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newStore(t, "site/a") },
		blobtest.Options{Incomplete: uploads, LargeSize: 12 << 20})
}
