package local

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// A batch's side of the journal (journal.go): its pack, written as its
// Puts come, and the commit that makes the pack's objects the store's.

// jwriter is a batch's pack.
type jwriter struct {
	f       *os.File
	path    string
	off     int64              // the next entry's
	entries map[string]*jentry // written whole, by key
	broken  bool               // a failed entry's header could not be marked: the pack cannot be read back
}

// journals tells whether key's object goes to the batch's pack.
func (b *batch) journals(key string, opt blob.PutOptions) bool {
	j := b.s.journal
	return j != nil && opt.Size > 0 && opt.Size <= maxJournalObject && contentKey(key, opt) && j.room(opt.Size)
}

// putJournal appends key's object to the batch's pack.
func (b *batch) putJournal(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) error {
	if err := b.start(); err != nil {
		return err
	}
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return report.Errorf(report.Internal, "blob batch used after Commit or Discard")
	}
	if b.jw == nil {
		jw, err := b.s.newPack()
		if err != nil {
			b.mu.Unlock()
			return blob.StorageErr(err, "cannot store the file")
		}
		b.jw = jw
	}
	jw := b.jw
	if jw.entries[key] != nil {
		b.mu.Unlock()
		return nil // a second file of the upload with the same bytes
	}
	off := jw.off
	jw.off += entryHeader + int64(len(key)) + opt.Size
	b.mu.Unlock()

	hdr := make([]byte, entryHeader+len(key))
	putHeader(hdr, entryMagic, len(key), opt.Size)
	copy(hdr[entryHeader:], key)
	w := &packWriter{f: jw.f, off: off, hdr: hdr, size: opt.Size}
	if err := w.fill(ctx, r); err != nil {
		// Mark the entry dead, so that reading the pack back skips it.
		putHeader(hdr, deadMagic, len(key), opt.Size)
		if _, werr := jw.f.WriteAt(hdr[:entryHeader], off); werr != nil {
			b.mu.Lock()
			jw.broken = true
			b.mu.Unlock()
		}
		return err
	}
	e := &jentry{key: key, off: off + int64(len(hdr)), size: opt.Size}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return report.Errorf(report.Internal, "blob batch used after Commit or Discard")
	}
	jw.entries[key] = e
	return nil
}

// newPack creates a pack in the journal's folder.
func (s *Store) newPack() (*jwriter, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	name := time.Now().UTC().Format("20060102T150405.000000000") + "-" + hex.EncodeToString(rnd[:]) + packSuffix
	p := filepath.Join(s.journal.dir, name)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return &jwriter{f: f, path: p, entries: map[string]*jentry{}}, nil
}

// packWriter writes one entry: its header with the first bytes, then the
// rest, never past the size announced (the next entry's room).
type packWriter struct {
	f       *os.File
	off     int64
	hdr     []byte // written with the first bytes
	size, n int64
	tooLong bool
}

var errTooLong = errors.New("more bytes than announced")

func (w *packWriter) Write(p []byte) (int, error) {
	if w.n+int64(len(p)) > w.size {
		w.tooLong = true
		return 0, errTooLong
	}
	at := w.off + int64(len(w.hdr)) + w.n
	var err error
	if w.n == 0 && len(w.hdr) > 0 {
		err = pwriteAll(w.f, [][]byte{w.hdr, p}, w.off)
	} else {
		_, err = w.f.WriteAt(p, at)
	}
	if err != nil {
		return 0, err
	}
	w.n += int64(len(p))
	return len(p), nil
}

// fill writes r's bytes (exactly w.size of them) after the header: in
// one call for a reader that can write itself out (bytes.Reader).
func (w *packWriter) fill(ctx context.Context, r io.Reader) error {
	var err error
	if wt, ok := r.(io.WriterTo); ok {
		_, err = wt.WriteTo(w)
	} else {
		buf := copyBufs.Get().(*[]byte)
		_, err = io.CopyBuffer(w, blob.ContextReader(ctx, r), *buf)
		copyBufs.Put(buf)
	}
	switch {
	case w.tooLong || err == nil && w.n != w.size:
		return report.Errorf(report.Validation, "object is not the %d bytes announced", w.size)
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return blob.StorageErr(err, "cannot store the file")
	}
	return ctx.Err()
}

// pwriteAll writes the buffers at off, in one call where it can.
func pwriteAll(f *os.File, bufs [][]byte, off int64) error {
	n, err := unix.Pwritev(int(f.Fd()), bufs, off)
	if err != nil {
		return err
	}
	for _, b := range bufs {
		if n >= len(b) {
			n -= len(b)
			off += int64(len(b))
			continue
		}
		if _, err := f.WriteAt(b[n:], off+int64(n)); err != nil {
			return err
		}
		off += int64(len(b))
		n = 0
	}
	return nil
}

// commitJournal makes a flushed pack's objects the store's: its trailer,
// flushed, says every entry before it is durable. perFile: the commit's
// flush did not cover the pack (no syncfs), so it is fsynced first.
func (s *Store) commitJournal(jw *jwriter, perFile bool) error {
	mine := true // the pack at jw.path is this batch's
	err := func() error {
		if jw.broken {
			return errors.New("a failed entry could not be marked in the pack")
		}
		if s.journal.stopped() {
			return errors.New("the store is closing")
		}
		if perFile {
			if err := jw.f.Sync(); err != nil {
				return err
			}
			if err := syncDir(filepath.Dir(jw.path)); err != nil {
				return err
			}
		}
		if _, err := jw.f.WriteAt(trailer(len(jw.entries), jw.off), jw.off); err != nil {
			return err
		}
		if err := unix.Fdatasync(int(jw.f.Fd())); err != nil {
			return err
		}
		// Still under its name: a store opened on the folder after this
		// one closed (a misuse: Close before the commit) removes packs
		// without a trailer.
		fi, err := jw.f.Stat()
		if err != nil {
			return err
		}
		if at, err := os.Stat(jw.path); err != nil || !os.SameFile(fi, at) {
			mine = false
			return errors.New("the journal's pack was removed before the commit")
		}
		return nil
	}()
	jw.f.Close()
	if err != nil {
		if mine {
			os.Remove(jw.path)
		}
		return blob.StorageErr(err, "cannot store the files")
	}
	pk := &jpack{path: jw.path}
	now := time.Now()
	for _, e := range jw.entries {
		e.pack, e.mtime = pk, now
		pk.bytes += e.size
		pk.entries = append(pk.entries, e)
	}
	slices.SortFunc(pk.entries, func(a, b *jentry) int { return cmp.Compare(a.off, b.off) }) // unpacked as written
	s.journal.add(pk)
	return nil
}

// discardJournal removes the pack of a batch that did not commit.
func discardJournal(jw *jwriter) {
	jw.f.Close()
	os.Remove(jw.path)
}

// openOwn opens key's object in the batch's own pack, if it wrote it
// (until the pack is unpacked and removed).
func (b *batch) openOwn(key string) (blob.Object, bool) {
	b.mu.Lock()
	jw := b.jw
	var e *jentry
	if jw != nil {
		e = jw.entries[key]
	}
	b.mu.Unlock()
	if e == nil {
		return nil, false
	}
	o, err := openEntry(jw.path, key, e.off, e.size, time.Now())
	return o, err == nil
}
