package local

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// Past maxOpenDirs folders, Stat still keeps the folder it was just asked
// about open (one other is forgotten), and answers from every folder.
func TestStatKeepsNewFoldersPastTheCap(t *testing.T) {
	s := newStore(t)
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
	if _, err := s.Stat(ctx, "reports/3/a.md"); err != nil {
		t.Fatalf("Stat in a forgotten folder: %v", err)
	}
}
