package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
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
//   - in this process, the batch writing it is in the registry (s.flight):
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
// A store whose file system does not keep these modes or extended
// attributes (probed at Open), or that another Store holds open (a lock on
// its folder), stages every object as before.

// pendingAttr marks the store's folder while pending files may exist.
const pendingAttr = "user.reportd.pending"

const (
	pendingMode = 0o700
	objectMode  = 0o600
)

// flight is a batch's claim on a key it is writing in place.
type flight struct {
	owner     *batch
	committed bool // flushed: the file is the object (mode change may be pending)
	replaced  bool // another batch's committed copy took the name: not the owner's file
}

// direct is the in-place writing state of a store; nil when it is off.
type direct struct {
	dirFD int // the store's folder, locked (flock) for as long as the store is open

	mu     sync.Mutex
	flight map[string]*flight
	dirty  bool // pendingAttr set: pending files may exist
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
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil || !modesKept(s.tmp) {
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
	if err := s.recoverPending(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := d.mark(false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return d, nil
}

// modesKept tells whether files created in dir keep pendingMode and then
// objectMode (not on file systems that ignore modes, nor under a umask
// that clears the owner's execute bit).
func modesKept(dir string) bool {
	p := filepath.Join(dir, "mode-probe-"+strconv.Itoa(os.Getpid()))
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
	if d.dirty && len(d.flight) == 0 && unix.Syncfs(d.dirFD) == nil && d.mark(false) == nil {
		d.dirty = false
	}
	unix.Close(d.dirFD)
	d.dirFD = -1
}

// recoverPending checks every pending file of the store (a crash left the
// state file marked): one whose sha256 is its name is flushed and made an
// object, any other is removed.
func (s *Store) recoverPending() error {
	return filepath.WalkDir(s.dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || !isSHA256(e.Name()) {
			return nil
		}
		if fi, err := e.Info(); err == nil && fi.Mode().Perm() == pendingMode {
			if _, err := settlePending(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

// settlePending decides a pending file nobody writes: if its sha256 is its
// name it is flushed and made an object (true), else removed (false).
func settlePending(p string) (bool, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	if hex.EncodeToString(h.Sum(nil)) == filepath.Base(p) {
		if err := f.Sync(); err != nil {
			return false, err
		}
		return true, f.Chmod(objectMode)
	}
	if err := os.Remove(p); err != nil {
		return false, err
	}
	return false, nil
}

// writesInPlace tells whether the batch writes key's object in place.
func (b *batch) writesInPlace(key string, opt blob.PutOptions) bool {
	return b.s.direct != nil && strings.Contains(key, "/") && path.Base(key) == opt.SHA256 && isSHA256(opt.SHA256)
}

// isSHA256 tells whether name is a lower-case hex sha256, as the names of
// in-place objects are.
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
		d.mu.Unlock()
		switch {
		case f.owner == b:
			return nil // a second file of the upload with the same bytes
		case f.committed:
			return blob.Exists(key)
		}
		return errStage
	}
	if !d.dirty {
		if err := d.mark(true); err != nil {
			d.mu.Unlock()
			return blob.StorageErr(err, "cannot store the file")
		}
		d.dirty = true
	}
	f := &flight{owner: b}
	d.flight[key] = f
	d.mu.Unlock()
	if err := b.start(); err != nil {
		d.forget(key, f)
		return err
	}
	err := b.s.writeNew(ctx, key, r, opt)
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

// writeNew creates key's file (pending) and writes r to it; an existing
// file is blob.ErrExists, once settled if it was pending. Anything else
// leaves no file.
func (s *Store) writeNew(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) error {
	dir, name := path.Split(key)
	for try := 0; ; try++ {
		fd, err := s.open.createIn(s.root, dir, name, pendingMode)
		if errors.Is(err, unix.EEXIST) && try == 0 {
			ok, err := s.settleExisting(key)
			switch {
			case err != nil:
				return blob.StorageErr(err, "cannot store the file")
			case ok:
				return blob.Exists(key)
			}
			continue // a broken leftover, removed: create it
		}
		if err != nil {
			return blob.StorageErr(err, "cannot store the file")
		}
		f := os.NewFile(uintptr(fd), s.abs(key))
		src := blob.ContextReader(ctx, r)
		if opt.Size > 0 {
			src = io.LimitReader(src, opt.Size+1)
		}
		buf := copyBufs.Get().(*[]byte)
		n, err := io.CopyBuffer(writerOnly{f}, src, *buf)
		copyBufs.Put(buf)
		if cerr := f.Close(); err == nil && cerr != nil {
			err = blob.StorageErr(cerr, "cannot store the file")
		}
		switch {
		case err != nil && ctx.Err() != nil:
			err = ctx.Err()
		case err != nil:
			err = blob.StorageErr(err, "cannot store the file")
		case opt.Size > 0 && n != opt.Size:
			err = report.Errorf(report.Validation, "object is %d bytes, not the %d announced", n, opt.Size)
		}
		if err != nil {
			s.root.Remove(filepath.FromSlash(key))
		}
		return err
	}
}

// settleExisting looks at key's existing file: an object (true), or a
// pending file nobody writes, settled (settlePending).
func (s *Store) settleExisting(key string) (bool, error) {
	fi, err := s.root.Lstat(filepath.FromSlash(key))
	switch {
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		return false, unix.EEXIST
	case fi.Mode().Perm() != pendingMode:
		return true, nil
	}
	return settlePending(s.abs(key))
}

// commitDirect marks the batch's in-place objects committed (after the
// commit's flush) and makes them objects (mode 0600) in the background.
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
			d.mu.Unlock()
			if f == nil || f.owner != b {
				continue
			}
			if !f.replaced {
				dir, name := path.Split(k)
				b.s.open.chmodIn(b.s.root, dir, name, objectMode)
			}
			d.forget(k, f)
		}
	})
}

// discardDirect removes the batch's in-place files (those still its own).
func (b *batch) discardDirect(keys []string) {
	d := b.s.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range keys {
		f := d.flight[k]
		if f == nil || f.owner != b {
			continue
		}
		if !f.replaced {
			b.s.root.Remove(filepath.FromSlash(k))
		}
		delete(d.flight, k)
	}
}

// placeContended gives a staged copy its key when another batch was
// writing that key in place as it was staged: if the writer has not
// committed yet, the copy (flushed already) replaces its file under the
// lock the writer's discard takes, and the writer's claim is marked so
// it neither removes nor touches the name; otherwise as placeNew.
func (b *batch) placeContended(o staged) error {
	d := b.s.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.flight[o.key]; f != nil && f.owner != b && !f.committed && !f.replaced {
		if err := os.Rename(o.tmp, b.s.abs(o.key)); err != nil {
			return err
		}
		f.replaced = true
		return nil
	}
	err := placeNew(o.tmp, b.s.abs(o.key))
	if errors.Is(err, fs.ErrExist) && d.flight[o.key] == nil {
		// Nobody writes it: if it is pending, a crash's leftover.
		if ok, serr := b.s.settleExisting(o.key); serr == nil && !ok {
			err = placeNew(o.tmp, b.s.abs(o.key))
		}
	}
	return err
}

// Stat describes key's object as the batch may rely on it: a pending file
// is one only once its writer committed it (or the batch wrote it).
func (b *batch) Stat(ctx context.Context, key string) (blob.Info, error) {
	if b.s.direct == nil || !isSHA256(path.Base(key)) {
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
	case !b.statPending(key):
		return blob.Info{}, blob.NotFound(key)
	}
	// Committed by another batch, maybe not yet flushed as a name: the
	// commit's flush covers it.
	if err := b.start(); err != nil {
		return blob.Info{}, err
	}
	return info, nil
}

// statPending is batch.Stat's view of a pending file: found if its writer
// committed it; missing while another batch writes it or nobody does
// (Put then settles it).
func (b *batch) statPending(key string) bool {
	d := b.s.direct
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.flight[key]
	return f != nil && (f.committed || f.owner == b)
}
