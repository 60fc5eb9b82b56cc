package local

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// BenchmarkBatch200 stages and commits a 200-file site (20 KiB each, in
// content-addressed folders) through one batch, 4 writers as site's
// putter uses: the figure behind publishing a 200-file report.
func BenchmarkBatch200(b *testing.B) {
	base := b.TempDir()
	s, err := Open(filepath.Join(base, "uploads"), filepath.Join(base, "tmp"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := bytes.Repeat([]byte("x"), 20<<10)
	ctx := context.Background()
	for i := range b.N {
		bt := s.NewBatch()
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for j := range jobs {
					key := fmt.Sprintf("cas/%02x/%d-%d", j%256, i, j)
					if err := bt.Put(ctx, key, bytes.NewReader(data), blob.PutOptions{IfNoneMatch: true, Size: int64(len(data))}); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for j := range 200 {
			jobs <- j
		}
		close(jobs)
		wg.Wait()
		if err := bt.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
