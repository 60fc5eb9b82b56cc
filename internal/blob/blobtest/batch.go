package blobtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// batch: staged objects are invisible until Commit, then all there; an
// existing key is kept as it was (IfNoneMatch, not an error); Adopt takes
// a local file; bad input fails the staging call, not the batch.
func batch(t *testing.T, s blob.Store, opt Options) {
	put(t, s, "cas/00/there", []byte("first"))
	b := s.(blob.Batcher).NewBatch()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			data := []byte(fmt.Sprintf("object %d", i))
			if err := b.Put(ctx, fmt.Sprintf("cas/%02d/o%d", i%3, i), bytes.NewReader(data), blob.PutOptions{IfNoneMatch: true, Size: int64(len(data))}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := b.Put(ctx, "cas/00/there", bytes.NewReader([]byte("second")), blob.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "cas/00/short", bytes.NewReader([]byte("short")), blob.PutOptions{Size: 100}); err == nil {
		t.Error("batch Put shorter than its Size succeeded")
	}
	if err := b.Put(ctx, "../bad", bytes.NewReader(nil), blob.PutOptions{}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("batch Put of a bad key: %v", err)
	}
	local := filepath.Join(t.TempDir(), "adopt")
	if err := os.WriteFile(local, []byte("adopted"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.Adopt(ctx, "cas/01/adopted", local, blob.PutOptions{Size: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(local); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("adopted file still at its path: %v", err)
	}
	for _, k := range []string{"cas/00/o0", "cas/01/adopted", "cas/00/short"} {
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("%s visible before Commit: %v", k, err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b.Discard() // after Commit: nothing
	for i := range 20 {
		if got := read(t, s, fmt.Sprintf("cas/%02d/o%d", i%3, i)); string(got) != fmt.Sprintf("object %d", i) {
			t.Errorf("object %d = %q", i, got)
		}
	}
	if got := read(t, s, "cas/00/there"); string(got) != "first" {
		t.Errorf("existing object overwritten: %q", got)
	}
	if got := read(t, s, "cas/01/adopted"); string(got) != "adopted" {
		t.Errorf("adopted object = %q", got)
	}
	if _, err := s.Stat(ctx, "cas/00/short"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("failed batch Put visible: %v", err)
	}
	if opt.Incomplete != nil {
		if left := opt.Incomplete(t, s); len(left) > 0 {
			t.Errorf("batch left unfinished writes: %v", left)
		}
	}
}

// batchDiscard: a discarded batch stores nothing and leaves nothing.
func batchDiscard(t *testing.T, s blob.Store, opt Options) {
	b := s.(blob.Batcher).NewBatch()
	for i := range 5 {
		if err := b.Put(ctx, fmt.Sprintf("cas/d%d", i), bytes.NewReader([]byte("x")), blob.PutOptions{IfNoneMatch: true}); err != nil {
			t.Fatal(err)
		}
	}
	b.Discard()
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err) // nothing left to commit
	}
	n := 0
	if err := s.Walk(ctx, "", func(blob.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("discarded batch left %d objects", n)
	}
	if opt.Incomplete != nil {
		if left := opt.Incomplete(t, s); len(left) > 0 {
			t.Errorf("discarded batch left unfinished writes: %v", left)
		}
	}
}
