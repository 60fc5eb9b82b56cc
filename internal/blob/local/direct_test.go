package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// inPlaceStore is a new store that writes objects in place (the test is
// skipped on a file system that keeps no modes or extended attributes).
func inPlaceStore(t *testing.T) *Store {
	t.Helper()
	noJournal(t)
	s := newStore(t)
	if s.direct == nil {
		t.Skip("this file system keeps no modes or extended attributes")
	}
	return s
}

// noJournal turns the journal off for the test: its small objects are
// then written in place.
func noJournal(t *testing.T) {
	journalOff = true
	t.Cleanup(func() { journalOff = false })
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
	s := inPlaceStore(t)
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
		s := inPlaceStore(t)
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
	s := inPlaceStore(t)
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
	if got := content(t, s2, "reports/1/"+strings.Repeat("0", 64)); got != "not an object key: left alone" {
		t.Fatalf("recovery touched a file outside the object layout: %q", got)
	}
}

// TestInPlaceOneStoreAtATime: a second Store over the same folder (which
// could not tell the first one's pending files from a crash's) stages
// every object.
func TestInPlaceOneStoreAtATime(t *testing.T) {
	s := inPlaceStore(t)
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

// TestInPlaceWriterCommitsFirst: a staged copy of a key whose writer
// committed before it is not needed; the writer's object stays.
func TestInPlaceWriterCommitsFirst(t *testing.T) {
	s := inPlaceStore(t)
	key, opt := casKey("first")
	w, c := s.NewBatch(), s.NewBatch()
	if err := w.Put(ctx, key, strings.NewReader("first"), opt); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, key, strings.NewReader("first"), opt); err != nil {
		t.Fatal(err)
	}
	ino := func() uint64 {
		var st unix.Stat_t
		if err := unix.Lstat(s.abs(key), &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	before := ino()
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if ino() != before || perm(t, s, key) != objectMode || content(t, s, key) != "first" {
		t.Fatalf("the writer's object was replaced or not made one: mode %v", perm(t, s, key))
	}
}

// failingReader gives its first part, then waits for release and fails.
type failingReader struct {
	first   string
	release chan struct{}
	sent    bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(p, r.first), nil
	}
	<-r.release
	return 0, errors.New("client went away")
}

// TestInPlaceFailedWriterKeepsReplacement: a writer whose upload fails
// after another batch's committed copy took the name leaves that copy.
func TestInPlaceFailedWriterKeepsReplacement(t *testing.T) {
	s := inPlaceStore(t)
	key, opt := casKey("replaced under a writer")
	opt.Size = 0
	w := s.NewBatch()
	r := &failingReader{first: "replaced", release: make(chan struct{})}
	failed := make(chan error, 1)
	go func() { failed <- w.Put(ctx, key, r, opt) }()
	for deadline := time.Now().Add(30 * time.Second); ; { // the writer holds its claim and its file
		if time.Now().After(deadline) {
			t.Fatal("the writer never created its file")
		}
		s.direct.mu.Lock()
		f := s.direct.flight[key]
		claimed := f != nil && f.ino != 0
		s.direct.mu.Unlock()
		if claimed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c := s.NewBatch()
	if err := c.Put(ctx, key, strings.NewReader("replaced under a writer"), opt); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	close(r.release)
	if err := <-failed; err == nil {
		t.Fatal("the writer's Put did not fail")
	}
	w.Discard()
	s.Settle()
	if content(t, s, key) != "replaced under a writer" || perm(t, s, key) != objectMode {
		t.Fatalf("the committed copy was lost: %q %v", content(t, s, key), perm(t, s, key))
	}
}

// TestSecondStoreNeverTrustsPending: a Store that could not take the lock
// (another process writes in place) neither takes a pending file for the
// object nor replaces it: its commit waits until the writer committed (the
// file is the object) or gave up (its own copy is then linked).
func TestSecondStoreNeverTrustsPending(t *testing.T) {
	for _, writerCommits := range []bool{false, true} {
		s := inPlaceStore(t)
		s2, err := Open(s.dir, s.tmp)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		key, opt := casKey("in flight elsewhere")
		w := s.NewBatch()
		if err := w.Put(ctx, key, strings.NewReader("in flight elsewhere"), opt); err != nil {
			t.Fatal(err)
		}
		b := s2.NewBatch()
		if _, err := b.(blob.BatchStater).Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("the second store's Stat of a pending file: %v, want not found", err)
		}
		if err := b.Put(ctx, key, strings.NewReader("in flight elsewhere"), opt); err != nil {
			t.Fatal(err)
		}
		committed := make(chan error, 1)
		go func() { committed <- b.Commit(ctx) }()
		select {
		case err := <-committed:
			t.Fatalf("the second store committed over a pending file: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if perm(t, s, key) != pendingMode {
			t.Fatal("the second store replaced the writer's pending file")
		}
		if writerCommits {
			if err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			w.Discard()
		}
		select {
		case err := <-committed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the second store's commit did not finish")
		}
		s.Settle()
		s2.Settle()
		if content(t, s, key) != "in flight elsewhere" || perm(t, s, key) != objectMode {
			t.Fatalf("writer committed %v: %q, mode %v", writerCommits, content(t, s, key), perm(t, s, key))
		}
	}
}

// TestInPlaceConcurrent: batches sharing keys, some committed and some
// discarded, concurrently (run with -race): every committed batch's
// objects are there whole and made objects, and no claim is left.
func TestInPlaceConcurrent(t *testing.T) {
	s := inPlaceStore(t)
	const batches, perBatch, contents = 8, 40, 50
	var wg sync.WaitGroup
	committed := make([][]string, batches)
	for i := range batches {
		wg.Go(func() {
			b := s.NewBatch()
			var keys []string
			for j := range perBatch {
				data := fmt.Sprintf("content %d", (i*7+j*3)%contents)
				key, opt := casKey(data)
				if err := b.Put(ctx, key, strings.NewReader(data), opt); err != nil && !errors.Is(err, blob.ErrExists) {
					t.Error(err)
					return
				}
				keys = append(keys, key)
			}
			if i%3 == 1 {
				b.Discard()
				return
			}
			if err := b.Commit(ctx); err != nil {
				t.Error(err)
				return
			}
			committed[i] = keys
		})
	}
	wg.Wait()
	s.Settle()
	for _, keys := range committed {
		for _, k := range keys {
			b, err := os.ReadFile(s.abs(k))
			if err != nil {
				t.Fatalf("%s of a committed batch: %v", k, err)
			}
			if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != path.Base(k) || perm(t, s, k) != objectMode {
				t.Fatalf("%s: content or mode wrong (%v)", k, perm(t, s, k))
			}
		}
	}
	s.direct.mu.Lock()
	defer s.direct.mu.Unlock()
	if len(s.direct.flight) != 0 {
		t.Fatalf("claims left: %d", len(s.direct.flight))
	}
}
