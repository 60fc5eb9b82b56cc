package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
)

// Objects written in place. A batch's content-addressed object (a key
// whose last segment is the sha256 of its bytes, PutOptions.SHA256) is
// created under its own key at once, not staged and linked at the commit:
// one file system entry instead of three (the temp name, the link, the
// temp name's removal), and one flush at the commit instead of two. The
// file is created "pending" (mode 0700: the owner's execute bit, which
// no object has otherwise) and made 0600 only after the commit's flush,
// so a pending file is one nobody may rely on yet:
//
//   - in this process, the batch writing it is in the registry (flight):
//     another batch that wants the same key does not take the pending
//     file for the object (batch.Stat says it is missing); it stages its
//     own copy, and at its commit renames that copy over the key if the
//     writer has not committed by then (same bytes: whichever inode holds
//     the name, it is complete and durable);
//   - a pending file nobody registered (a crash's, or one whose mode
//     change failed) is checked before anyone relies on it: its sha256
//     must be its name (then it is flushed and made 0600), else it is
//     removed;
//   - a crash leaves the store's folder marked (an extended attribute,
//     pendingAttr, set before the first pending file and cleared at Close
//     once every mode change is flushed): the next Open checks every
//     pending file before the store is used.
//
//   - a writer never removes a name another copy took since: it checks
//     its claim (replaced) and the file's inode, under the registry's
//     lock that a contender's rename takes too.
//
// A store whose file system does not keep these modes or extended
// attributes (probed at Open), or that another Store holds open (a lock on
// its folder), stages every object as before, and never takes a pending
// file for an object nor replaces one (the other process's writer removes
// its file by name): it waits until the file is made an object or goes,
// then links its own copy (placeObject).
// Only keys of the site store's layout, <...>/<p>/<sha256> (inPlaceKey),
// are ever written in place or checked as pending.

// pendingAttr marks the store's folder while pending files may exist.
const pendingAttr = "user.reportd.pending"

const (
	pendingMode = 0o700
	objectMode  = 0o600
)

// flight is a batch's claim on a key it is writing in place.
type flight struct {
	owner     *batch
	ino       uint64 // the file the owner created
	committed bool   // flushed: the file is the object (mode change may be pending)
	replaced  bool   // another batch's copy took the name: not the owner's file
}

// direct is the in-place writing state of a store; nil when it is off.
type direct struct {
	dirFD int // the store's folder, locked (flock) for as long as the store is open

	mu     sync.Mutex
	flight map[string]*flight
	dirty  bool // pendingAttr set: pending files may exist
	failed bool // a pending file may be left unsettled: keep the mark
}

// openDirect locks the store's folder, checks the pending files a crash
// left (recoverPending) and probes the file system. It returns nil
// (objects are then staged) when another Store holds the lock or the file
// system does not keep modes or extended attributes.
func (s *Store) openDirect() (*direct, error) {
	fd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil || !modesKept(s.dir) {
		unix.Close(fd)
		return nil, nil
	}
	d := &direct{dirFD: fd, flight: map[string]*flight{}}
	_, err = unix.Fgetxattr(fd, pendingAttr, nil)
	switch {
	case errors.Is(err, unix.ENODATA):
		return d, nil
	case err != nil: // no extended attributes here
		unix.Close(fd)
		return nil, nil
	}
	complete, err := s.recoverPending()
	if err == nil && complete {
		// The modes set are made durable before the mark goes.
		if err = unix.Syncfs(fd); err == nil {
			err = d.mark(false)
		}
	} else if err == nil {
		d.dirty, d.failed = true, true // a folder could not be read: check again next time
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return d, nil
}

// modesKept tells whether files created in dir keep pendingMode and then
// objectMode (not on file systems that ignore modes, nor under a umask
// that clears the owner's execute bit).
func modesKept(dir string) bool {
	p := filepath.Join(dir, ".mode-probe-"+strconv.Itoa(os.Getpid()))
	os.Remove(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, pendingMode)
	if err != nil {
		return false
	}
	defer os.Remove(p)
	defer f.Close()
	for i, m := range []os.FileMode{pendingMode, objectMode} {
		if i > 0 && f.Chmod(m) != nil {
			return false
		}
		if fi, err := f.Stat(); err != nil || fi.Mode().Perm() != m {
			return false
		}
	}
	return true
}

// mark records (durably) whether pending files may exist.
func (d *direct) mark(dirty bool) error {
	var err error
	if dirty {
		err = unix.Fsetxattr(d.dirFD, pendingAttr, []byte("1"), 0)
	} else if err = unix.Fremovexattr(d.dirFD, pendingAttr); errors.Is(err, unix.ENODATA) {
		err = nil
	}
	if err == nil {
		err = unix.Fsync(d.dirFD)
	}
	return err
}

// closeDirect runs once the mode changes are done (Close): it flushes them
// and clears the mark, so the next Open checks nothing.
func (s *Store) closeDirect() {
	d := s.direct
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirFD < 0 {
		return // closed already
	}
	if d.dirty && !d.failed && len(d.flight) == 0 && unix.Syncfs(d.dirFD) == nil && d.mark(false) == nil {
		d.dirty = false
	}
	unix.Close(d.dirFD)
	d.dirFD = -1
}

// recoverPending checks every pending file of the store (a crash left the
// folder marked): one whose sha256 is its name is flushed and made an
// object, any other is removed. complete is false if a folder could not
// be read.
func (s *Store) recoverPending() (complete bool, err error) {
	complete = true
	err = filepath.WalkDir(s.dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			complete = false
			return nil
		}
		rel, rerr := filepath.Rel(s.dir, p)
		if rerr != nil || !e.Type().IsRegular() || !inPlaceKey(filepath.ToSlash(rel)) {
			return nil
		}
		fi, err := e.Info()
		if err != nil || fi.Mode().Perm() != pendingMode {
			return nil
		}
		ok, err := verifyPending(p)
		if err == nil && !ok {
			err = os.Remove(p)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			complete = false // unreadable: left pending, checked again next time
		}
		return nil
	})
	return complete, err
}

// verifyPending tells whether the pending file at p holds the bytes its
// name is the sha256 of; if so it is flushed and made an object (0600).
func verifyPending(p string) (bool, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	if hex.EncodeToString(h.Sum(nil)) != filepath.Base(p) {
		return false, nil
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if err := f.Chmod(objectMode); err != nil {
		return false, err
	}
	// Its name too, where a crash of the process alone left it unflushed.
	return true, syncDir(filepath.Dir(p))
}

// writesInPlace tells whether the batch writes key's object in place.
func (b *batch) writesInPlace(key string, opt blob.PutOptions) bool {
	return b.s.direct != nil && path.Base(key) == opt.SHA256 && inPlaceKey(key)
}

// inPlaceKey tells whether key can name an object written in place:
// <...>/<p>/<sha256>, p the sha256's first two digits (the site store's
// layout). Nothing else is ever pending, nor checked as such.
func inPlaceKey(key string) bool {
	dir, name := path.Split(key)
	if !isSHA256(name) {
		return false
	}
	return dir == name[:2]+"/" || strings.HasSuffix(dir, "/"+name[:2]+"/")
}

// isSHA256 tells whether name is a lower-case hex sha256.
func isSHA256(name string) bool {
	if len(name) != sha256.Size*2 {
		return false
	}
	for _, c := range []byte(name) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
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
			b.s.removeOwn(key, f)
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
	if err := blob.CheckKey(key); err != nil {
		return blob.Info{}, err
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
