package local

import (
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
//     pending file before the store is used;
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
// (objects are then staged) when another Store holds the lock (taken
// true) or the file system does not keep modes or extended attributes.
func (s *Store) openDirect() (_ *direct, taken bool, _ error) {
	fd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, nil
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		unix.Close(fd)
		return nil, true, nil
	}
	if !modesKept(s.dir) {
		unix.Close(fd)
		return nil, false, nil
	}
	d := &direct{dirFD: fd, flight: map[string]*flight{}}
	_, err = unix.Fgetxattr(fd, pendingAttr, nil)
	switch {
	case errors.Is(err, unix.ENODATA):
		return d, false, nil
	case err != nil: // no extended attributes here
		unix.Close(fd)
		return nil, false, nil
	}
	if !s.recoverPending() {
		d.dirty, d.failed = true, true // a file or folder could not be read: check again next time
		return d, false, nil
	}
	// The modes set are made durable before the mark goes.
	if err := unix.Syncfs(fd); err != nil {
		unix.Close(fd)
		return nil, false, err
	}
	if err := d.mark(false); err != nil {
		unix.Close(fd)
		return nil, false, err
	}
	return d, false, nil
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
// object, any other is removed. It tells whether every one was settled
// (false if a file or folder could not be read).
func (s *Store) recoverPending() (complete bool) {
	complete = true
	filepath.WalkDir(s.dir, func(p string, e os.DirEntry, err error) error {
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
	return complete
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

// contentKey tells whether key names the content-addressed object of
// opt's bytes (the site layout, with its sha256 known): what a batch may
// write in place or journal.
func contentKey(key string, opt blob.PutOptions) bool {
	return path.Base(key) == opt.SHA256 && inPlaceKey(key)
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
