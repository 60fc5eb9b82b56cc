// Package blobtest is the conformance suite every blob.Store passes: run
// it from the store's tests with a constructor that gives a fresh, empty
// store per call.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// Options tunes the suite for a store.
type Options struct {
	// LargeSize is the size of the streamed object (default 64 MiB).
	LargeSize int64
	// MaxLargeAlloc bounds what the large round trip may allocate in this
	// process (default 16 MiB): the object must stream, not sit in memory.
	MaxLargeAlloc uint64
	// Incomplete lists what unfinished writes s holds apart from its
	// objects (local: temp files; S3: open multipart uploads). If set, the
	// suite checks that failed and cancelled Puts leave none.
	Incomplete func(t *testing.T, s blob.Store) []string
	// NoStaging skips the staging test for a store without its own
	// staging area (a wrapper hiding the fast paths); reportd's stores
	// all have one (blob.Stager).
	NoStaging bool
}

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store, opt Options) {
	if opt.LargeSize == 0 {
		opt.LargeSize = 64 << 20
	}
	if opt.MaxLargeAlloc == 0 {
		opt.MaxLargeAlloc = 16 << 20
	}
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("Overwrite", func(t *testing.T) { overwrite(t, newStore(t)) })
	t.Run("Ranges", func(t *testing.T) { ranges(t, newStore(t)) })
	t.Run("IfNoneMatch", func(t *testing.T) { ifNoneMatch(t, newStore(t)) })
	t.Run("Missing", func(t *testing.T) { missing(t, newStore(t)) })
	t.Run("DeleteIdempotent", func(t *testing.T) { deleteIdempotent(t, newStore(t)) })
	t.Run("Walk", func(t *testing.T) { walk(t, newStore(t)) })
	t.Run("InvalidKeys", func(t *testing.T) { invalidKeys(t, newStore(t)) })
	t.Run("AtomicVisibility", func(t *testing.T) { atomicVisibility(t, newStore(t)) })
	t.Run("FailedPut", func(t *testing.T) { failedPut(t, newStore(t), opt) })
	t.Run("ConcurrentPuts", func(t *testing.T) { concurrentPuts(t, newStore(t)) })
	t.Run("ConcurrentCreates", func(t *testing.T) { concurrentCreates(t, newStore(t)) })
	t.Run("Copy", func(t *testing.T) { copyObject(t, newStore(t)) })
	t.Run("DeletePrefix", func(t *testing.T) { deletePrefix(t, newStore(t)) })
	t.Run("Large", func(t *testing.T) { large(t, newStore(t), opt) })
	if _, ok := newStore(t).(blob.Stager); ok || !opt.NoStaging {
		t.Run("Stage", func(t *testing.T) { stage(t, newStore(t)) })
	}
	if _, ok := newStore(t).(blob.Batcher); ok {
		t.Run("Batch", func(t *testing.T) { batch(t, newStore(t), opt) })
		t.Run("BatchDiscard", func(t *testing.T) { batchDiscard(t, newStore(t), opt) })
	}
}

var ctx = context.Background()

func put(t *testing.T, s blob.Store, key string, data []byte) blob.Info {
	t.Helper()
	info, err := s.Put(ctx, key, bytes.NewReader(data), blob.PutOptions{Size: int64(len(data))})
	if err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
	return info
}

func read(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	o, err := s.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open %s: %v", key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

func isNotFound(err error) bool {
	return errors.Is(err, blob.ErrNotFound) && report.IsKind(err, report.NotFound)
}

func roundTrip(t *testing.T, s blob.Store) {
	data := []byte("hello, blob")
	before := time.Now().Add(-time.Minute)
	info := put(t, s, "reports/1.html", data)
	if info.Key != "reports/1.html" || info.Size != int64(len(data)) {
		t.Errorf("Put info = %+v", info)
	}
	if got := read(t, s, "reports/1.html"); !bytes.Equal(got, data) {
		t.Errorf("read back %q", got)
	}
	st, err := s.Stat(ctx, "reports/1.html")
	if err != nil || st.Size != int64(len(data)) || st.Key != "reports/1.html" || st.ModTime.Before(before) {
		t.Errorf("Stat = %+v, %v", st, err)
	}
	o, err := s.Open(ctx, "reports/1.html")
	if err != nil {
		t.Fatal(err)
	}
	if oi := o.Info(); oi.Size != int64(len(data)) || oi.Key != "reports/1.html" {
		t.Errorf("Object.Info = %+v", oi)
	}
	o.Close()
	// Size 0 is "unknown": the store streams it.
	if _, err := s.Put(ctx, "empty", bytes.NewReader(nil), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "empty"); len(got) != 0 {
		t.Errorf("empty object read %d bytes", len(got))
	}
	if _, err := s.Put(ctx, "unknown/size", io.MultiReader(bytes.NewReader(data), bytes.NewReader(data)), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "unknown/size"); !bytes.Equal(got, append(slices.Clone(data), data...)) {
		t.Errorf("unknown-size object read %q", got)
	}
}

func overwrite(t *testing.T, s blob.Store) {
	put(t, s, "k", []byte("first version, longer"))
	put(t, s, "k", []byte("second"))
	if got := read(t, s, "k"); string(got) != "second" {
		t.Errorf("after overwrite: %q", got)
	}
}

func ranges(t *testing.T, s blob.Store) {
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	put(t, s, "r", data)
	o, err := s.Open(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, c := range []struct {
		off    int64
		whence int
		abs    int64
		n      int
	}{{0, io.SeekStart, 0, 10}, {50_000, io.SeekStart, 50_000, 1000}, {-10, io.SeekEnd, 99_990, 10}, {5, io.SeekCurrent, 99_990 + 10 + 5, 0}, {99_999, io.SeekStart, 99_999, 1}} {
		pos, err := o.Seek(c.off, c.whence)
		if err != nil {
			t.Fatalf("Seek(%d, %d): %v", c.off, c.whence, err)
		}
		if c.whence == io.SeekCurrent {
			continue // past the end: only the position matters
		}
		if pos != c.abs {
			t.Fatalf("Seek(%d, %d) = %d, want %d", c.off, c.whence, pos, c.abs)
		}
		buf := make([]byte, c.n)
		if _, err := io.ReadFull(o, buf); err != nil {
			t.Fatalf("read %d at %d: %v", c.n, pos, err)
		}
		if !bytes.Equal(buf, data[c.abs:c.abs+int64(c.n)]) {
			t.Errorf("bytes at %d differ", c.abs)
		}
	}
	// ReadAt, independent of the offset.
	at := make([]byte, 500)
	if n, err := o.ReadAt(at, 70_000); n != len(at) || (err != nil && err != io.EOF) || !bytes.Equal(at, data[70_000:70_500]) {
		t.Errorf("ReadAt(70000) = %d, %v", n, err)
	}
	if n, err := o.ReadAt(at, int64(len(data))-100); n != 100 || err != io.EOF || !bytes.Equal(at[:100], data[len(data)-100:]) {
		t.Errorf("ReadAt across the end = %d, %v", n, err)
	}
	// Size by seeking to the end, as http.ServeContent does.
	if end, err := o.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Errorf("Seek end = %d, %v", end, err)
	}
	if n, err := o.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Errorf("read at end = %d, %v", n, err)
	}
}

func ifNoneMatch(t *testing.T, s blob.Store) {
	if _, err := s.Put(ctx, "cas/ab/abcdef", bytes.NewReader([]byte("one")), blob.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatalf("conditional create of a new key: %v", err)
	}
	_, err := s.Put(ctx, "cas/ab/abcdef", bytes.NewReader([]byte("two, different")), blob.PutOptions{IfNoneMatch: true})
	if !errors.Is(err, blob.ErrExists) {
		t.Fatalf("second conditional create: %v, want ErrExists", err)
	}
	if errors.Is(err, blob.ErrNotFound) {
		t.Error("ErrExists also matches ErrNotFound")
	}
	if got := read(t, s, "cas/ab/abcdef"); string(got) != "one" {
		t.Errorf("first object overwritten: %q", got)
	}
	assertKeys(t, s, "cas/", "cas/ab/abcdef")
}

func missing(t *testing.T, s blob.Store) {
	if _, err := s.Open(ctx, "nope/x"); !isNotFound(err) {
		t.Errorf("Open missing: %v", err)
	}
	if _, err := s.Stat(ctx, "nope"); !isNotFound(err) {
		t.Errorf("Stat missing: %v", err)
	}
	put(t, s, "dir/file", []byte("x"))
	// A "directory" is not an object.
	if _, err := s.Open(ctx, "dir"); !isNotFound(err) {
		t.Errorf("Open of a prefix: %v", err)
	}
	if _, err := s.Stat(ctx, "dir"); !isNotFound(err) {
		t.Errorf("Stat of a prefix: %v", err)
	}
	if err := s.Delete(ctx, "nope/x"); err != nil {
		t.Errorf("Delete missing: %v", err)
	}
	if err := s.Walk(ctx, "nope/", func(i blob.Info) error { t.Errorf("walked %s", i.Key); return nil }); err != nil {
		t.Errorf("Walk of a missing prefix: %v", err)
	}
}

func deleteIdempotent(t *testing.T, s blob.Store) {
	put(t, s, "a/b", []byte("x"))
	put(t, s, "a/c", []byte("y"))
	for range 2 {
		if err := s.Delete(ctx, "a/b"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Stat(ctx, "a/b"); !isNotFound(err) {
		t.Errorf("after Delete: %v", err)
	}
	if got := read(t, s, "a/c"); string(got) != "y" {
		t.Errorf("neighbour: %q", got)
	}
	// Deleting a prefix that is not an object leaves what is below it.
	if err := s.Delete(ctx, "a"); err != nil {
		t.Errorf("Delete of a prefix: %v", err)
	}
	assertKeys(t, s, "", "a/c")
}

func keys(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var ks []string
	err := s.Walk(ctx, prefix, func(i blob.Info) error {
		if i.Size < 0 || i.ModTime.IsZero() {
			t.Errorf("Walk info %+v", i)
		}
		ks = append(ks, i.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk %q: %v", prefix, err)
	}
	slices.Sort(ks)
	return ks
}

func assertKeys(t *testing.T, s blob.Store, prefix string, want ...string) {
	t.Helper()
	if got := keys(t, s, prefix); !slices.Equal(got, want) {
		t.Errorf("Walk %q = %q, want %q", prefix, got, want)
	}
}

func walk(t *testing.T, s blob.Store) {
	for _, k := range []string{"a/1", "a/2", "a/x/3", "ab/4", "b/5", "a.txt", "top"} {
		put(t, s, k, []byte(k))
	}
	assertKeys(t, s, "", "a.txt", "a/1", "a/2", "a/x/3", "ab/4", "b/5", "top")
	assertKeys(t, s, "a/", "a/1", "a/2", "a/x/3")
	assertKeys(t, s, "a", "a.txt", "a/1", "a/2", "a/x/3", "ab/4")
	assertKeys(t, s, "a/x", "a/x/3")
	assertKeys(t, s, "t", "top")
	assertKeys(t, s, "zz/")
	stop := errors.New("stop")
	n := 0
	err := s.Walk(ctx, "", func(blob.Info) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Walk stopped by fn: %v after %d", err, n)
	}
	var sizes = map[string]int64{}
	s.Walk(ctx, "a/", func(i blob.Info) error { sizes[i.Key] = i.Size; return nil })
	if sizes["a/x/3"] != int64(len("a/x/3")) {
		t.Errorf("Walk sizes %v", sizes)
	}
}

// InvalidKeys are refused by every method of every store.
var InvalidKeys = []string{"", "/abs", "a/", "../x", "a/../b", "a/..", "..", ".", "a/./b", "a//b", `a\b`, "a\x00b", "a\nb", string(bytes.Repeat([]byte("k"), blob.MaxKeyLen+1))}

func invalidKeys(t *testing.T, s blob.Store) {
	put(t, s, "ok", []byte("x"))
	for _, k := range InvalidKeys {
		invalid := func(op string, err error) {
			if !errors.Is(err, blob.ErrInvalidKey) || report.KindOf(err) != report.Validation {
				t.Errorf("%s(%q) = %v, want ErrInvalidKey", op, k, err)
			}
		}
		_, err := s.Put(ctx, k, bytes.NewReader([]byte("x")), blob.PutOptions{})
		invalid("Put", err)
		_, err = s.Open(ctx, k)
		invalid("Open", err)
		_, err = s.Stat(ctx, k)
		invalid("Stat", err)
		invalid("Delete", s.Delete(ctx, k))
		if k != "" && k != "a/" {
			invalid("Walk", s.Walk(ctx, k, func(blob.Info) error { return nil }))
		}
		invalid("Copy", blob.Copy(ctx, s, "ok", k))
		if k != "a/" {
			invalid("DeletePrefix", blob.DeletePrefix(ctx, s, k))
		}
	}
	assertKeys(t, s, "", "ok")
}

// gate is a reader that yields first, then blocks until released, then
// yields rest (or fails with err).
type gate struct {
	first, rest []byte
	reached     chan struct{}
	release     chan struct{}
	err         error
	stage       int
}

func newGate(first, rest []byte, err error) *gate {
	return &gate{first: first, rest: rest, err: err, reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Read(p []byte) (int, error) {
	switch g.stage {
	case 0:
		n := copy(p, g.first)
		g.first = g.first[n:]
		if len(g.first) == 0 {
			g.stage = 1
		}
		return n, nil
	case 1:
		close(g.reached)
		<-g.release
		g.stage = 2
		if g.err != nil {
			return 0, g.err
		}
		fallthrough
	default:
		if len(g.rest) == 0 {
			return 0, io.EOF
		}
		n := copy(p, g.rest)
		g.rest = g.rest[n:]
		return n, nil
	}
}

func atomicVisibility(t *testing.T, s blob.Store) {
	old := bytes.Repeat([]byte("o"), 300_000)
	put(t, s, "seen", old)
	half, rest := bytes.Repeat([]byte("N"), 200_000), bytes.Repeat([]byte("n"), 200_000)
	for _, key := range []string{"seen", "fresh"} {
		g := newGate(slices.Clone(half), slices.Clone(rest), nil)
		done := make(chan error, 1)
		go func() {
			_, err := s.Put(ctx, key, g, blob.PutOptions{})
			done <- err
		}()
		<-g.reached
		// Half of the new object is written: readers see the old one whole, or none.
		if key == "seen" {
			if got := read(t, s, key); !bytes.Equal(got, old) {
				t.Errorf("mid-Put read of %s: %d bytes, not the old object", key, len(got))
			}
		} else if _, err := s.Stat(ctx, key); !isNotFound(err) {
			t.Errorf("mid-Put Stat of a new key: %v", err)
		}
		assertKeys(t, s, "", "seen")
		close(g.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := read(t, s, key); !bytes.Equal(got, append(slices.Clone(half), rest...)) {
			t.Errorf("after Put %s: %d bytes", key, len(got))
		}
	}
	assertKeys(t, s, "", "fresh", "seen")
}

func failedPut(t *testing.T, s blob.Store, opt Options) {
	put(t, s, "keep", []byte("intact"))
	boom := errors.New("client went away")
	for _, key := range []string{"keep", "new"} {
		g := newGate(bytes.Repeat([]byte("x"), 100_000), nil, boom)
		close(g.release)
		if _, err := s.Put(ctx, key, g, blob.PutOptions{}); err == nil {
			t.Errorf("Put %s from a failing reader succeeded", key)
		}
		// Size announced but not delivered (S3: a multipart upload cut short).
		if _, err := s.Put(ctx, key, bytes.NewReader([]byte("short")), blob.PutOptions{Size: 1000}); err == nil {
			t.Errorf("Put %s shorter than its Size succeeded", key)
		}
		if _, err := s.Put(ctx, key, bytes.NewReader([]byte("too long")), blob.PutOptions{Size: 3}); err == nil {
			t.Errorf("Put %s longer than its Size succeeded", key)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Put(cctx, key, bytes.NewReader([]byte("late")), blob.PutOptions{}); err == nil {
			t.Errorf("Put %s with a cancelled context succeeded", key)
		}
		// Cancelled mid-stream.
		cctx, cancel = context.WithCancel(ctx)
		g = newGate(bytes.Repeat([]byte("y"), 100_000), bytes.Repeat([]byte("y"), 100_000), nil)
		done := make(chan error, 1)
		go func() { _, err := s.Put(cctx, key, g, blob.PutOptions{}); done <- err }()
		<-g.reached
		cancel()
		close(g.release)
		if err := <-done; err == nil {
			t.Errorf("Put %s cancelled mid-stream succeeded", key)
		}
	}
	if got := read(t, s, "keep"); string(got) != "intact" {
		t.Errorf("failed Puts changed the object: %q", got)
	}
	if _, err := s.Stat(ctx, "new"); !isNotFound(err) {
		t.Errorf("failed Put left an object: %v", err)
	}
	assertKeys(t, s, "", "keep")
	if opt.Incomplete != nil {
		if left := opt.Incomplete(t, s); len(left) != 0 {
			t.Errorf("failed Puts left incomplete writes: %q", left)
		}
	}
}

func contents(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 256<<10) }

func concurrentPuts(t *testing.T, s blob.Store) {
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := s.Put(ctx, "same", bytes.NewReader(contents(i)), blob.PutOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := read(t, s, "same")
	for i := range n {
		if bytes.Equal(got, contents(i)) {
			return
		}
	}
	t.Errorf("after concurrent Puts the object (%d bytes) is none of them whole", len(got))
}

func concurrentCreates(t *testing.T, s blob.Store) {
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []int
	for i := range n {
		wg.Go(func() {
			_, err := s.Put(ctx, "once", bytes.NewReader(contents(i)), blob.PutOptions{IfNoneMatch: true})
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, i)
				mu.Unlock()
			case !errors.Is(err, blob.ErrExists):
				t.Errorf("create %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d conditional creates succeeded, want 1", len(won))
	}
	if got := read(t, s, "once"); !bytes.Equal(got, contents(won[0])) {
		t.Errorf("the object is not the winner's")
	}
}

func copyObject(t *testing.T, s blob.Store) {
	put(t, s, "reports/1.html", []byte("<p>x</p>"))
	if err := blob.Copy(ctx, s, "reports/1.html", "reports/1.md"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "reports/1.md"); string(got) != "<p>x</p>" {
		t.Errorf("copy reads %q", got)
	}
	if err := blob.Copy(ctx, s, "reports/1.html", "reports/1.md"); !errors.Is(err, blob.ErrExists) {
		t.Errorf("copy onto an existing key: %v", err)
	}
	if err := blob.Copy(ctx, s, "reports/9.html", "reports/9.md"); !isNotFound(err) {
		t.Errorf("copy of a missing key: %v", err)
	}
	// The copy outlives the original.
	if err := s.Delete(ctx, "reports/1.html"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "reports/1.md"); string(got) != "<p>x</p>" {
		t.Errorf("copy after deleting the original reads %q", got)
	}
	assertKeys(t, s, "", "reports/1.md")
}

func deletePrefix(t *testing.T, s blob.Store) {
	for _, k := range []string{"covers/1/a.png", "covers/1/b.png", "covers/12/c.png", "covers/2/d.png"} {
		put(t, s, k, []byte(k))
	}
	if err := blob.DeletePrefix(ctx, s, "covers/1/"); err != nil {
		t.Fatal(err)
	}
	assertKeys(t, s, "", "covers/12/c.png", "covers/2/d.png")
	if err := blob.DeletePrefix(ctx, s, "covers/7/"); err != nil {
		t.Errorf("DeletePrefix of nothing: %v", err)
	}
	if err := blob.DeletePrefix(ctx, s, ""); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("DeletePrefix of everything: %v", err)
	}
	assertKeys(t, s, "", "covers/12/c.png", "covers/2/d.png")
}

// stream yields n deterministic bytes without holding them.
type stream struct {
	n, off int64
}

func (s *stream) Read(p []byte) (int, error) {
	if s.off >= s.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.n-s.off)]
	for i := range p {
		o := s.off + int64(i)
		p[i] = byte(o ^ o>>8 ^ o>>16)
	}
	s.off += int64(len(p))
	return len(p), nil
}

func large(t *testing.T, s blob.Store, opt Options) {
	want := sha256.New()
	io.Copy(want, &stream{n: opt.LargeSize})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	info, err := s.Put(ctx, "large/object", &stream{n: opt.LargeSize}, blob.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != opt.LargeSize {
		t.Errorf("Put info size %d", info.Size)
	}
	o, err := s.Open(ctx, "large/object")
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, err := io.Copy(got, o)
	if err != nil || n != opt.LargeSize {
		t.Fatalf("read back %d bytes: %v", n, err)
	}
	// A range near the end.
	if _, err := o.Seek(opt.LargeSize-1000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	tail, _ := io.ReadAll(o)
	o.Close()
	runtime.ReadMemStats(&after)
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Error("large object differs")
	}
	exp := make([]byte, 1000)
	(&stream{n: opt.LargeSize, off: opt.LargeSize - 1000}).Read(exp)
	if !bytes.Equal(tail, exp) {
		t.Error("large object's tail range differs")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > opt.MaxLargeAlloc {
		t.Errorf("a %d-byte round trip allocated %d bytes: not streamed", opt.LargeSize, alloc)
	}
	if err := s.Delete(ctx, "large/object"); err != nil {
		t.Fatal(err)
	}
}
