package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// journalStore is a new store with a journal.
func journalStore(t *testing.T) *Store {
	t.Helper()
	s := newStore(t)
	if s.journal == nil {
		t.Fatal("the store has no journal")
	}
	return s
}

// pause keeps the store's unpacker from starting on a pack until the
// returned func is called.
func pause(s *Store) (resume func()) {
	s.journal.running.Lock()
	var once sync.Once
	return func() { once.Do(s.journal.running.Unlock) }
}

// pausedCommit is a journal store whose unpacker is paused (deferred
// resume in the caller), holding n objects "<prefix> <i>" committed in one
// batch, still in the journal.
func pausedCommit(t *testing.T, prefix string, n int) (s *Store, resume func(), data, keys []string) {
	t.Helper()
	s = journalStore(t)
	resume = pause(s)
	b := s.NewBatch()
	data = contents(prefix, n)
	keys = putAll(t, b, data...)
	if err := b.Commit(ctx); err != nil {
		resume()
		t.Fatal(err)
	}
	return s, resume, data, keys
}

// crashCopy copies s's folder as a crash would leave it now and returns
// the copy's uploads/ and tmp/ folders (not opened).
func crashCopy(t *testing.T, s *Store) (dir, tmp string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "uploads")
	if err := os.CopyFS(dir, os.DirFS(s.dir)); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(base, "tmp")
}

// putAll puts each content as its cas object in b and returns the keys.
func putAll(t *testing.T, b blob.Batch, contents ...string) []string {
	t.Helper()
	var keys []string
	for _, c := range contents {
		k, opt := casKey(c)
		if err := b.Put(ctx, k, strings.NewReader(c), opt); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
		keys = append(keys, k)
	}
	return keys
}

func contents(prefix string, n int) []string {
	var c []string
	for i := range n {
		c = append(c, fmt.Sprintf("%s %d", prefix, i))
	}
	return c
}

// opener is a store or a batch that reads.
type opener interface {
	Open(ctx context.Context, key string) (blob.Object, error)
}

// readKey reads key through s ("" and an error if it cannot).
func readKey(s opener, key string) (string, error) {
	o, err := s.Open(ctx, key)
	if err != nil {
		return "", err
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	return string(b), err
}

func walkKeys(t *testing.T, s *Store, prefix string) []string {
	t.Helper()
	var keys []string
	if err := s.Walk(ctx, prefix, func(i blob.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

func packs(t *testing.T, s *Store) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(s.dir, journalDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestJournal: a batch's small objects are invisible until the commit
// (the batch reads its own), then the store's from the journal before
// any file is written, and once unpacked, files of mode 0600 with no
// journal left; a large object is not journalled.
func TestJournal(t *testing.T) {
	s := journalStore(t)
	b := s.NewBatch()
	data := contents("object", 40)
	keys := putAll(t, b, data...)
	big := strings.Repeat("b", maxJournalObject+1)
	bigKey := putAll(t, b, big)[0]
	for i, k := range keys {
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("%s visible before the commit: %v", k, err)
		}
		if got, err := readKey(b.(blob.BatchOpener), k); err != nil || got != data[i] {
			t.Fatalf("the batch reads %s as %q, %v", k, got, err)
		}
	}
	resume := pause(s)
	defer resume()
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if len(packs(t, s)) != 1 {
		t.Fatalf("journal holds %v, want one pack", packs(t, s))
	}
	for i, k := range keys {
		if _, ok := s.journal.lookup(k); !ok {
			t.Fatalf("%s is not in the journal", k)
		}
		if _, err := os.Lstat(s.abs(k)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s has a file before the unpacker ran: %v", k, err)
		}
		if info, err := s.Stat(ctx, k); err != nil || info.Size != int64(len(data[i])) {
			t.Fatalf("stat %s: %+v, %v", k, info, err)
		}
		if got, err := readKey(s, k); err != nil || got != data[i] {
			t.Fatalf("read %s: %q, %v", k, got, err)
		}
	}
	if _, ok := s.journal.lookup(bigKey); ok {
		t.Fatal("an object over maxJournalObject went to the journal")
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(keys), bigKey)))
	if got := walkKeys(t, s, "cas/"); !slices.Equal(got, want) {
		t.Fatalf("walk before unpacking: %d keys, want %d", len(got), len(want))
	}
	resume()
	s.Settle()
	for i, k := range keys {
		if content(t, s, k) != data[i] || perm(t, s, k) != objectMode {
			t.Fatalf("%s unpacked as %q, mode %v", k, content(t, s, k), perm(t, s, k))
		}
		if _, ok := s.journal.lookup(k); ok {
			t.Fatalf("%s still in the journal", k)
		}
	}
	if p := packs(t, s); len(p) != 0 {
		t.Fatalf("packs left: %v", p)
	}
	if got := walkKeys(t, s, "cas/"); !slices.Equal(got, want) {
		t.Fatalf("walk after unpacking: %d keys, want %d", len(got), len(want))
	}
}

// TestJournalDiscard: a discarded batch's pack goes, nothing is visible.
func TestJournalDiscard(t *testing.T) {
	s := journalStore(t)
	b := s.NewBatch()
	keys := putAll(t, b, contents("discarded", 5)...)
	b.Discard()
	for _, k := range keys {
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("%s of a discarded batch: %v", k, err)
		}
	}
	if p := packs(t, s); len(p) != 0 {
		t.Fatalf("packs left: %v", p)
	}
}

// TestJournalDelete: deleting an object still in the journal removes it
// for good (the unpacker does not write it back), also by folder; the
// same object committed again later is the store's again.
func TestJournalDelete(t *testing.T) {
	s, resume, data, keys := pausedCommit(t, "deleted", 30)
	defer resume()
	if err := s.Delete(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	folder := keys[1][:len("cas/xx/")]
	if err := s.DeletePrefix(ctx, folder); err != nil {
		t.Fatal(err)
	}
	gone := func(k string) bool { return k == keys[0] || strings.HasPrefix(k, folder) }
	for _, k := range keys {
		if _, err := s.Stat(ctx, k); gone(k) != errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("stat %s after the deletes: %v", k, err)
		}
		if slices.Contains(walkKeys(t, s, ""), k) == gone(k) {
			t.Fatalf("walk after the deletes is wrong about %s", k)
		}
	}
	// keys[0] committed again while the first pack is still queued.
	b2 := s.NewBatch()
	putAll(t, b2, data[0])
	if err := b2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	resume()
	s.Settle()
	for i, k := range keys {
		_, err := os.Lstat(s.abs(k))
		switch {
		case k == keys[0]:
			if content(t, s, k) != data[0] {
				t.Fatalf("%s committed again is %q", k, content(t, s, k))
			}
		case gone(k):
			if !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("deleted %s written back: %v", k, err)
			}
		case content(t, s, k) != data[i]:
			t.Fatalf("%s is %q", k, content(t, s, k))
		}
	}
}

// TestJournalReadBack: a crash after the commit, before any file is
// written (the folder copied as it is then), is read back at Open: the
// objects are there at once and unpacked after; an entry whose bytes
// were damaged is dropped, a half-written file is replaced, a pack
// with no trailer (a batch that never committed) is removed.
func TestJournalReadBack(t *testing.T) {
	s, resume, data, keys := pausedCommit(t, "crash", 20)
	defer resume()
	dir, tmp := crashCopy(t, s)
	resume()

	pk := packs(t, s)[0]
	raw, err := os.ReadFile(filepath.Join(dir, journalDir, pk))
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Index(raw, []byte(data[1]))
	raw[damaged] ^= 0xff
	if err := os.WriteFile(filepath.Join(dir, journalDir, pk), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	uncommitted := filepath.Join(dir, journalDir, "0-uncommitted"+packSuffix)
	if err := os.WriteFile(uncommitted, raw[:len(raw)-trailerSize], 0o600); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, filepath.FromSlash(keys[2]))
	os.MkdirAll(filepath.Dir(half), 0o750)
	if err := os.WriteFile(half, []byte(data[2][:3]), objectMode); err != nil {
		t.Fatal(err)
	}

	s2, err := Open(dir, tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := os.Stat(uncommitted); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a pack with no trailer was kept: %v", err)
	}
	check := func(when string) {
		for i, k := range keys {
			got, err := readKey(s2, k)
			if i == 1 {
				if !errors.Is(err, blob.ErrNotFound) {
					t.Fatalf("%s: damaged entry read back as %q, %v", when, got, err)
				}
				continue
			}
			if err != nil || got != data[i] {
				t.Fatalf("%s: %s is %q, %v", when, k, got, err)
			}
		}
	}
	check("read back")
	s2.Settle()
	check("unpacked")
	if content(t, s2, keys[2]) != data[2] {
		t.Fatalf("the half-written file was kept: %q", content(t, s2, keys[2]))
	}
	// The pack had an entry that could not be read back: kept aside.
	if p := packs(t, s2); len(p) != 1 || !strings.HasSuffix(p[0], damagedSuffix) {
		t.Fatalf("after reading back a damaged pack, the journal holds %v", p)
	}
}

// TestJournalDeleteMarksThePack: a delete of an object still in the
// journal is marked in its pack, so reading the pack back (after a
// crash) does not bring the object back.
func TestJournalDeleteMarksThePack(t *testing.T) {
	s, resume, data, keys := pausedCommit(t, "kept or not", 6)
	defer resume()
	// The same object in a second pack too.
	b2 := s.NewBatch()
	putAll(t, b2, data[0])
	if err := b2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	dir, tmp := crashCopy(t, s)
	resume()
	s2, err := Open(dir, tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.Settle()
	for i, k := range keys {
		got, err := readKey(s2, k)
		if i == 0 {
			if !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("deleted %s read back as %q, %v", k, got, err)
			}
			continue
		}
		if err != nil || got != data[i] {
			t.Fatalf("%s: %q, %v", k, got, err)
		}
	}
	if p := packs(t, s2); len(p) != 0 {
		t.Fatalf("packs left: %v", p)
	}
}

// TestJournalFolderIsNoKey: nothing in the journal's folder is an object.
func TestJournalFolderIsNoKey(t *testing.T) {
	s := journalStore(t)
	for _, k := range []string{journalDir, journalDir + "/x" + packSuffix} {
		if _, err := s.Put(ctx, k, strings.NewReader("x"), blob.PutOptions{}); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("put %s: %v", k, err)
		}
		if _, err := s.Open(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("open %s: %v", k, err)
		}
		if err := s.Delete(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("delete %s: %v", k, err)
		}
	}
	if err := s.DeletePrefix(ctx, journalDir+"/"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("delete the folder: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close() // a second Close is harmless
}

// TestJournalLocalPath: an engine asking for the path of an object still
// in the journal gets its file, written then.
func TestJournalLocalPath(t *testing.T) {
	s, resume, data, keys := pausedCommit(t, "a page", 1)
	defer resume()
	p, err := s.LocalPath(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != data[0] {
		t.Fatalf("LocalPath's file: %q, %v", got, err)
	}
}

// TestJournalOverPending: the unpacker finds a broken pending file under
// a key (a crash's, not yet checked): its copy replaces it.
func TestJournalOverPending(t *testing.T) {
	s, resume, data, keys := pausedCommit(t, "the right bytes", 1)
	defer resume()
	if s.direct == nil {
		t.Skip("this file system keeps no modes or extended attributes")
	}
	os.MkdirAll(filepath.Dir(s.abs(keys[0])), 0o750)
	if err := os.WriteFile(s.abs(keys[0]), []byte("torn"), pendingMode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.abs(keys[0]), pendingMode)
	resume()
	s.Settle()
	if content(t, s, keys[0]) != data[0] || perm(t, s, keys[0]) != objectMode {
		t.Fatalf("after unpacking: %q, mode %v", content(t, s, keys[0]), perm(t, s, keys[0]))
	}
}

// TestJournalSecondStore: another Store on the folder has no journal;
// its objects are files at once, seen by both.
func TestJournalSecondStore(t *testing.T) {
	s := journalStore(t)
	s2, err := Open(s.dir, s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.journal != nil {
		t.Fatal("two stores hold the journal")
	}
	b := s2.NewBatch()
	keys := putAll(t, b, "from an admin command")
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := readKey(s, keys[0]); err != nil || got != "from an admin command" {
		t.Fatalf("the daemon's store reads %q, %v", got, err)
	}
}

// TestJournalConcurrent: batches sharing keys commit or discard while
// readers read and a deleter deletes; run with -race. Whatever a reader
// gets is whole; in the end every object of a committed batch not
// deleted is its file, and no discarded-only one exists.
func TestJournalConcurrent(t *testing.T) {
	s := journalStore(t)
	pool := contents("shared", 60)
	var mu sync.Mutex
	committed, deletedKeys := map[string]string{}, map[string]bool{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 5 {
				b := s.NewBatch()
				var mine []string
				for range 15 {
					mine = append(mine, pool[r.IntN(len(pool))])
				}
				keys := putAll(t, b, mine...)
				if r.IntN(3) == 0 {
					b.Discard()
					continue
				}
				if err := b.Commit(ctx); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i, k := range keys {
					committed[k] = mine[i]
					delete(deletedKeys, k)
				}
				mu.Unlock()
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, c := range pool {
					k, _ := casKey(c)
					if got, err := readKey(s, k); err == nil && got != c {
						t.Errorf("read %s as %q", k, got)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	// Deletes racing the unpacker.
	mu.Lock()
	for k := range committed {
		if len(deletedKeys) < 10 {
			deletedKeys[k] = true
		}
	}
	mu.Unlock()
	var dels sync.WaitGroup
	for k := range deletedKeys {
		dels.Go(func() {
			if err := s.Delete(ctx, k); err != nil {
				t.Error(err)
			}
		})
	}
	dels.Wait()
	s.Settle()
	for _, c := range pool {
		k, _ := casKey(c)
		_, err := os.Lstat(s.abs(k))
		switch {
		case deletedKeys[k]:
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("deleted %s exists: %v", k, err)
			}
		case committed[k] != "":
			if content(t, s, k) != c {
				t.Errorf("%s is %q", k, content(t, s, k))
			}
		case !errors.Is(err, os.ErrNotExist):
			t.Errorf("%s of discarded batches only exists: %v", k, err)
		}
	}
}
