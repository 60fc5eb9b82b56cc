package local

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// Past maxOpenDirs folders, Stat still keeps the folder it was just asked
// about open (one other is closed and forgotten), never holds more than
// maxOpenDirs, and answers from every folder.
func TestStatKeepsNewFoldersPastTheCap(t *testing.T) {
	s := newStore(t)
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	before := fds()
	put := func(key string) {
		if _, err := s.Put(ctx, key, bytes.NewReader([]byte("x")), blob.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range maxOpenDirs + 8 {
		key := fmt.Sprintf("reports/%d/a.md", i)
		put(key)
		if in, err := s.Stat(ctx, key); err != nil || in.Size != 1 {
			t.Fatalf("Stat %s: %+v, %v", key, in, err)
		}
	}
	put("cas/ab/abcd")
	if in, err := s.Stat(ctx, "cas/ab/abcd"); err != nil || in.Size != 1 {
		t.Fatalf("Stat past the cap: %+v, %v", in, err)
	}
	s.open.mu.RLock()
	n, kept := len(s.open.dirs), s.open.dirs["cas/ab/"] != nil
	s.open.mu.RUnlock()
	if n != maxOpenDirs || !kept {
		t.Fatalf("%d folders kept open (want %d), cas/ab/ among them: %v", n, maxOpenDirs, kept)
	}
	// Every key still answers, from a kept folder or a forgotten (closed)
	// one, which is opened again.
	for i := range maxOpenDirs + 8 {
		key := fmt.Sprintf("reports/%d/a.md", i)
		if in, err := s.Stat(ctx, key); err != nil || in.Size != 1 {
			t.Fatalf("Stat %s after evictions: %+v, %v", key, in, err)
		}
	}
	if _, err := s.Stat(ctx, "reports/0/missing.md"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat of a missing key: %v", err)
	}
	if grown := fds() - before; grown > maxOpenDirs+16 {
		t.Errorf("%d more descriptors open, want at most the %d folders kept (evicted ones closed)", grown, maxOpenDirs)
	}
}
