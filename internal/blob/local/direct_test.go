package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
)

// casKey is the content key of s, with the options that let a batch write
// it in place.
func casKey(s string) (string, blob.PutOptions) {
	h := sha256.Sum256([]byte(s))
	x := hex.EncodeToString(h[:])
	return "cas/" + x[:2] + "/" + x, blob.PutOptions{IfNoneMatch: true, Size: int64(len(s)), SHA256: x}
}

func perm(t *testing.T, s *Store, key string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(s.abs(key))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return fi.Mode().Perm()
}

func content(t *testing.T, s *Store, key string) string {
	t.Helper()
	b, err := os.ReadFile(s.abs(key))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return string(b)
}

// TestInPlace: a content object is written under its key at once,
// pending (0700) and so missing for other batches, and made an object
// (0600) after the commit; nothing is staged; a discard removes it.
func TestInPlace(t *testing.T) {
	s := newStore(t)
	if s.direct == nil {
		t.Skip("this file system keeps no modes or extended attributes")
	}
	key, opt := casKey("in place")
	b := s.NewBatch()
	if err := b.Put(ctx, key, strings.NewReader("in place"), opt); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, s, key); p != pendingMode {
		t.Fatalf("before the commit: mode %v, want pending", p)
	}
	if _, err := b.(blob.BatchStater).Stat(ctx, key); err != nil {
		t.Fatalf("the writer's own Stat: %v", err)
	}
	other := s.NewBatch()
	defer other.Discard()
	if _, err := other.(blob.BatchStater).Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("another batch's Stat of a pending object: %v, want not found", err)
	}
	if entries, _ := os.ReadDir(s.tmp); len(entries) != 0 {
		t.Fatalf("staged: %v", entries)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if p := perm(t, s, key); p != objectMode || content(t, s, key) != "in place" {
		t.Fatalf("after the commit: mode %v, %q", p, content(t, s, key))
	}
	if _, err := other.(blob.BatchStater).Stat(ctx, key); err != nil {
		t.Fatalf("Stat after the commit: %v", err)
	}

	gone, gopt := casKey("discarded")
	d := s.NewBatch()
	if err := d.Put(ctx, gone, strings.NewReader("discarded"), gopt); err != nil {
		t.Fatal(err)
	}
	d.Discard()
	if _, err := os.Lstat(s.abs(gone)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Discard: %v", err)
	}
	s.direct.mu.Lock()
	defer s.direct.mu.Unlock()
	if len(s.direct.flight) != 0 {
		t.Fatalf("claims left: %v", s.direct.flight)
	}
}

// TestInPlaceContended: a batch that wants a key another is writing stages
// its own copy; committed first, the copy takes the name, and the
// writer's discard leaves it.
func TestInPlaceContended(t *testing.T) {
	for _, writerCommits := range []bool{false, true} {
		s := newStore(t)
		if s.direct == nil {
			t.Skip("this file system keeps no modes or extended attributes")
		}
		key, opt := casKey("shared")
		w := s.NewBatch()
		if err := w.Put(ctx, key, strings.NewReader("shared"), opt); err != nil {
			t.Fatal(err)
		}
		c := s.NewBatch()
		if err := c.Put(ctx, key, strings.NewReader("shared"), opt); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(s.tmp); len(entries) != 1 {
			t.Fatalf("the second batch staged nothing: %v", entries)
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if p := perm(t, s, key); p != objectMode {
			t.Fatalf("after the second batch's commit: mode %v, want its own copy (0600)", p)
		}
		if writerCommits {
			if err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			w.Discard()
		}
		s.Settle()
		if p := perm(t, s, key); p != objectMode || content(t, s, key) != "shared" {
			t.Fatalf("writer committed %v: mode %v, %q", writerCommits, p, content(t, s, key))
		}
	}
}

// TestPendingLeftovers: a pending file nobody writes (a crash's) is
// checked before anyone relies on it: kept if its bytes hash to its name,
// replaced if not; and Open checks them all when the folder is marked.
func TestPendingLeftovers(t *testing.T) {
	s := newStore(t)
	if s.direct == nil {
		t.Skip("this file system keeps no modes or extended attributes")
	}
	plant := func(key, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(s.abs(key)), 0o750)
		if err := os.WriteFile(s.abs(key), []byte(data), pendingMode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(s.abs(key), pendingMode)
	}
	good, gopt := casKey("whole")
	torn, topt := casKey("whole, then torn")
	plant(good, "whole")
	plant(torn, "whole, th")
	b := s.NewBatch()
	if _, err := b.(blob.BatchStater).Stat(ctx, good); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat of a leftover: %v, want not found", err)
	}
	if err := b.Put(ctx, good, strings.NewReader("whole"), gopt); !errors.Is(err, blob.ErrExists) {
		t.Fatalf("Put over a whole leftover: %v, want exists", err)
	}
	if err := b.Put(ctx, torn, strings.NewReader("whole, then torn"), topt); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if perm(t, s, good) != objectMode || content(t, s, good) != "whole" {
		t.Fatalf("whole leftover: %v %q", perm(t, s, good), content(t, s, good))
	}
	if perm(t, s, torn) != objectMode || content(t, s, torn) != "whole, then torn" {
		t.Fatalf("torn leftover: %v %q", perm(t, s, torn), content(t, s, torn))
	}

	// A crash: the folder marked, leftovers; the next Open settles them.
	dir, tmp := s.dir, s.tmp
	s.Close()
	good2, _ := casKey("whole two")
	torn2, _ := casKey("torn two")
	plant(good2, "whole two")
	plant(torn2, "tor")
	plant("reports/1/"+strings.Repeat("0", 64), "not an object key: left alone")
	if err := unix.Setxattr(dir, pendingAttr, []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.direct == nil {
		t.Fatal("not writing in place after recovery")
	}
	if perm(t, s2, good2) != objectMode || content(t, s2, good2) != "whole two" {
		t.Fatal("a whole leftover was not kept")
	}
	if _, err := os.Lstat(s2.abs(torn2)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a torn leftover was kept: %v", err)
	}
	if _, err := unix.Getxattr(dir, pendingAttr, nil); !errors.Is(err, unix.ENODATA) {
		t.Fatalf("mark left after recovery: %v", err)
	}
}

// TestInPlaceOneStoreAtATime: a second Store over the same folder (which
// could not tell the first one's pending files from a crash's) stages
// every object.
func TestInPlaceOneStoreAtATime(t *testing.T) {
	s := newStore(t)
	if s.direct == nil {
		t.Skip("this file system keeps no modes or extended attributes")
	}
	s2, err := Open(s.dir, s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.direct != nil {
		t.Fatal("two stores write in place in one folder")
	}
	key, opt := casKey("staged")
	b := s2.NewBatch()
	if err := b.Put(ctx, key, strings.NewReader("staged"), opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.abs(key)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("visible before the commit: %v", err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s2.Settle()
	if content(t, s, key) != "staged" {
		t.Fatal("not stored")
	}
}
