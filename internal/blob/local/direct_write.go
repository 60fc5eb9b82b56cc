package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
)

// A batch's side of objects written in place (direct.go has the store's:
// the mark, recovery and the checks of a pending file): the claims, the
// writes, what the commit and a discard do with them, and how a staged
// copy and a lookup meet a pending file.

// writesInPlace tells whether the batch writes key's object in place.
func (b *batch) writesInPlace(key string, opt blob.PutOptions) bool {
	return b.s.direct != nil && contentKey(key, opt)
}

// putDirect writes key's object in place (pending), unless another batch
// is writing it (the object is then staged: errStage) or it exists
// (blob.ErrExists).
func (b *batch) putDirect(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) error {
	d := b.s.direct
	d.mu.Lock()
	if f := d.flight[key]; f != nil {
		own, committed := f.owner == b, f.committed
		d.mu.Unlock()
		switch {
		case own:
			return nil // a second file of the upload with the same bytes
		case committed:
			return blob.Exists(key)
		}
		return errStage
	}
	if !d.dirty {
		if d.mark(true) != nil {
			d.mu.Unlock()
			return errStage // the folder cannot be marked: no pending file without the mark
		}
		d.dirty = true
	}
	f := &flight{owner: b}
	d.flight[key] = f
	d.mu.Unlock()
	err := b.start()
	if err == nil {
		err = b.writeNew(ctx, key, r, opt, f)
	}
	if err != nil {
		d.forget(key, f)
		return err
	}
	b.mu.Lock()
	b.direct = append(b.direct, key)
	b.mu.Unlock()
	return nil
}

// errStage sends a Put to the staged path.
var errStage = errors.New("blob/local: stage the object")

// forget drops f's claim on key.
func (d *direct) forget(key string, f *flight) {
	d.mu.Lock()
	if d.flight[key] == f {
		delete(d.flight, key)
	}
	d.mu.Unlock()
}

// writeNew creates key's file (pending) under the claim f and writes r to
// it; an existing file is blob.ErrExists, once checked if it was pending.
// Anything else leaves no file of its own.
func (b *batch) writeNew(ctx context.Context, key string, r io.Reader, opt blob.PutOptions, f *flight) error {
	s := b.s
	dir, name := path.Split(key)
	for range 3 {
		fd, err := s.open.createIn(s.root, dir, name, pendingMode)
		if errors.Is(err, unix.EEXIST) {
			ok, err := b.settleClaimed(key, f)
			switch {
			case err == nil && ok:
				return blob.Exists(key)
			case err == nil, errors.Is(err, fs.ErrNotExist):
				continue // a broken leftover, removed (or gone meanwhile): create it
			}
			return blob.StorageErr(err, "cannot store the file")
		}
		if err != nil {
			return blob.StorageErr(err, "cannot store the file")
		}
		var st unix.Stat_t
		serr := unix.Fstat(fd, &st)
		s.direct.mu.Lock()
		f.ino = st.Ino
		if serr != nil || st.Mode&0o777 != pendingMode {
			// Not marked pending (a default ACL on the folder?): never
			// leave it looking like an object; stage the object instead.
			unix.Close(fd)
			if !f.replaced {
				s.root.Remove(filepath.FromSlash(key))
			}
			s.direct.mu.Unlock()
			return errStage
		}
		s.direct.mu.Unlock()
		err = fill(ctx, os.NewFile(uintptr(fd), s.abs(key)), r, opt)
		if err != nil {
			s.direct.mu.Lock()
			s.removeOwn(key, f)
			s.direct.mu.Unlock()
		}
		return err
	}
	return blob.StorageErr(unix.EEXIST, "cannot store the file")
}

// settleClaimed looks at the file found under key when creating it under
// the claim f: an object (true), or a pending file nobody writes, checked
// (verifyPending) and removed if broken (false). Under the lock, so that
// no other batch's copy can take the name meanwhile.
func (b *batch) settleClaimed(key string, f *flight) (bool, error) {
	d := b.s.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	if f.replaced {
		return true, nil // another batch's committed copy is there now
	}
	fi, err := b.s.root.Lstat(filepath.FromSlash(key))
	switch {
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		return false, unix.EEXIST
	case fi.Mode().Perm() != pendingMode:
		return true, nil
	}
	if ok, err := verifyPending(b.s.abs(key)); err != nil || ok {
		return ok, err
	}
	return false, b.s.root.Remove(filepath.FromSlash(key))
}

// removeOwn removes the file the claim f created under key, unless
// another copy took the name since (replaced here, or renamed over it by
// a Store of another process: a different inode). Under d.mu.
func (s *Store) removeOwn(key string, f *flight) {
	if f.replaced {
		return
	}
	fi, err := s.root.Lstat(filepath.FromSlash(key))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.direct.failed = true // maybe left pending: the next start checks it
		}
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Ino == f.ino {
		if err := s.root.Remove(filepath.FromSlash(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.direct.failed = true // left pending: the next start checks it
		}
	}
}

// commitDirect marks the batch's in-place objects committed (after the
// commit's flush) and makes them objects (mode 0600) in the background; a
// mode that could not be set leaves the store's mark for the next start.
func (b *batch) commitDirect(keys []string) {
	d := b.s.direct
	d.mu.Lock()
	for _, k := range keys {
		if f := d.flight[k]; f != nil && f.owner == b {
			f.committed = true
		}
	}
	d.mu.Unlock()
	b.s.later(func() {
		for _, k := range keys {
			d.mu.Lock()
			f := d.flight[k]
			replaced := f != nil && f.replaced
			d.mu.Unlock()
			if f == nil || f.owner != b {
				continue
			}
			if !replaced {
				dir, name := path.Split(k)
				if b.s.open.chmodIn(b.s.root, dir, name, objectMode) != nil {
					d.mu.Lock()
					d.failed = true
					d.mu.Unlock()
				}
			}
			d.forget(k, f)
		}
	})
}

// discardDirect removes the batch's in-place files (those still its own).
// Under the lock, as a contender's rename is: a discard is rare (a failed
// upload), so holding it for the removals is simpler than any handover.
func (b *batch) discardDirect(keys []string) {
	d := b.s.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range keys {
		if f := d.flight[k]; f != nil && f.owner == b {
			b.s.removeOwn(k, f)
			delete(d.flight, k)
		}
	}
}

// placeObject gives a staged copy of a content object its key: a link
// (placeNew), and where the name holds a pending file, placeOverPending in
// a store that writes in place. A store that does not (another process
// holds the lock and writes in place) never takes that process's pending
// file for the object nor replaces it (its writer removes its file by
// name): it waits, at most settleWait, until the file is made an object or
// removed.
func (b *batch) placeObject(ctx context.Context, o staged) error {
	dst := b.s.abs(o.key)
	deadline := time.Now().Add(settleWait)
	for {
		err := placeNew(o.tmp, dst)
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, lerr := b.s.root.Lstat(filepath.FromSlash(o.key))
		switch {
		case errors.Is(lerr, fs.ErrNotExist):
			continue // removed meanwhile: link it again
		case lerr != nil:
			return lerr
		case !fi.Mode().IsRegular() || fi.Mode().Perm() != pendingMode:
			return err // an object
		}
		if b.s.direct != nil {
			if done, err := b.placeOverPending(o, dst); done {
				return err
			}
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: another process's write of the same file did not finish within %v", o.key, settleWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settleWait bounds how long a store without the lock waits for another
// process's pending file of the same content.
const settleWait = time.Minute

// placeOverPending decides, under the lock, a pending file found where a
// staged copy is to go: another batch writing it that has not committed
// has the copy (flushed already) take the name, and its claim is marked
// so it neither removes nor touches the name; a committed one, or the
// batch's own, is the object; one nobody writes (a crash's) is checked,
// and the copy takes the name if it is broken. done is false if the file
// went meanwhile (link again).
func (b *batch) placeOverPending(o staged, dst string) (done bool, err error) {
	d := b.s.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	fi, err := b.s.root.Lstat(filepath.FromSlash(o.key))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return true, err
	case !fi.Mode().IsRegular() || fi.Mode().Perm() != pendingMode:
		return true, fs.ErrExist
	}
	if f := d.flight[o.key]; f != nil {
		if f.owner == b || f.committed || f.replaced {
			return true, fs.ErrExist
		}
		if err := os.Rename(o.tmp, dst); err != nil {
			return true, err
		}
		f.replaced = true
		return true, nil
	}
	ok, err := verifyPending(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return true, err
	case ok:
		return true, fs.ErrExist
	}
	return true, os.Rename(o.tmp, dst)
}

// Stat describes key's object as the batch may rely on it: a pending file
// is one only once its writer in this store committed it (or the batch
// wrote it).
func (b *batch) Stat(ctx context.Context, key string) (blob.Info, error) {
	if !inPlaceKey(key) {
		return b.s.Stat(ctx, key)
	}
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	if e, ok := b.s.journal.lookup(key); ok {
		return e.info(), nil
	}
	info, perm, found, ok := b.s.statFastMode(key)
	if !ok {
		fi, err := b.s.root.Stat(filepath.FromSlash(key))
		if err != nil || !fi.Mode().IsRegular() {
			return blob.Info{}, blob.NotFound(key)
		}
		info, perm, found = infoOf(key, fi), uint32(fi.Mode().Perm()), true
	}
	switch {
	case !found:
		return blob.Info{}, blob.NotFound(key)
	case perm != pendingMode:
		return info, nil
	case !b.pendingIsObject(key):
		return blob.Info{}, blob.NotFound(key)
	}
	// Committed by another batch, maybe not yet flushed as a name: the
	// commit's flush covers it.
	if err := b.start(); err != nil {
		return blob.Info{}, err
	}
	return info, nil
}

// pendingIsObject tells whether key's pending file is one the batch may
// rely on: its writer in this store committed it, or it is the batch's.
func (b *batch) pendingIsObject(key string) bool {
	d := b.s.direct
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.flight[key]; f != nil && !f.replaced {
		return f.committed || f.owner == b
	}
	// No claim (or a replaced one): made an object since the caller looked?
	fi, err := b.s.root.Lstat(filepath.FromSlash(key))
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != pendingMode
}
