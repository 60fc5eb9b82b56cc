package local

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
)

// Stat's fast path. Through the os.Root, a stat opens every folder of the
// key's path and closes it again (cas/ab/<sha>: six system calls); a site
// of 10,000 files asks for 10,000 keys in a few hundred folders. The
// store keeps the folders it was asked about open (opened through the
// root, so never outside it) and stats the last name in them without
// following a link: one call, two for a key that is not there (the
// folder's link count tells that it was not removed since; a folder
// removed and made again, as DeletePrefix does, is opened afresh).
// Anything else (a link, a folder that cannot be opened) takes the root's
// path, which decides.

// maxOpenDirs bounds the folders kept open: past it, one is closed and
// forgotten for each opened.
const maxOpenDirs = 1024

// openDirs are the folders kept open. A descriptor is used only under mu's
// read lock and closed only under its write lock, so a folder forgotten
// (removed since it was opened, or evicted) is closed at once, never
// under a call that uses it.
type openDirs struct {
	mu   sync.RWMutex
	dirs map[string]*os.File
}

// statFast describes key's regular file, or tells it is missing; ok is
// false when the root's path must decide.
func (s *Store) statFast(key string) (info blob.Info, found, ok bool) {
	info, _, found, ok = s.statFastMode(key)
	return info, found, ok
}

// statFastMode is statFast, with the file's permission bits.
func (s *Store) statFastMode(key string) (info blob.Info, perm uint32, found, ok bool) {
	dir, name := path.Split(key)
	if dir == "" {
		return blob.Info{}, 0, false, false
	}
	o := &s.open
	o.mu.RLock()
	d := o.dirs[dir]
	if d == nil {
		o.mu.RUnlock()
		if !o.add(s.root, dir) {
			return blob.Info{}, 0, false, false
		}
		o.mu.RLock()
		if d = o.dirs[dir]; d == nil { // evicted meanwhile: the root's path decides
			o.mu.RUnlock()
			return blob.Info{}, 0, false, false
		}
	}
	var st, ds unix.Stat_t
	err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	live := errors.Is(err, unix.ENOENT) && unix.Fstat(int(d.Fd()), &ds) == nil && ds.Nlink > 0
	o.mu.RUnlock()
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG:
		return blob.Info{Key: key, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix())}, st.Mode & 0o777, true, true
	case live:
		return blob.Info{}, 0, false, true
	case errors.Is(err, unix.ENOENT):
		o.drop(dir, d) // removed since: the next Stat opens it afresh
	}
	return blob.Info{}, 0, false, false
}

// at runs fn on dir's kept-open folder (made if missing), under the read
// lock; errNoDir if the folder cannot be kept open.
func (o *openDirs) at(root *os.Root, dir string, fn func(dfd int) error) error {
	for try := 0; try < 3; try++ {
		o.mu.RLock()
		if d := o.dirs[dir]; d != nil {
			err := fn(int(d.Fd()))
			o.mu.RUnlock()
			if errors.Is(err, unix.ENOENT) { // the folder was removed: open it afresh
				o.drop(dir, d)
				continue
			}
			return err
		}
		o.mu.RUnlock()
		if !o.add(root, dir) {
			if err := root.MkdirAll(filepath.FromSlash(dir), 0o750); err != nil {
				return err
			}
		}
	}
	return errNoDir
}

var errNoDir = errors.New("blob/local: cannot keep the folder open")

// createIn creates dir's file name (O_EXCL, no link followed) with perm
// and returns its descriptor.
func (o *openDirs) createIn(root *os.Root, dir, name string, perm uint32) (int, error) {
	fd := -1
	err := o.at(root, dir, func(dfd int) error {
		var err error
		fd, err = unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		return err
	})
	return fd, err
}

// chmodIn sets the permission bits of dir's file name.
func (o *openDirs) chmodIn(root *os.Root, dir, name string, perm uint32) error {
	return o.at(root, dir, func(dfd int) error { return unix.Fchmodat(dfd, name, perm, 0) })
}

// add opens dir and keeps it open, unless it is already (false: cannot).
func (o *openDirs) add(root *os.Root, dir string) bool {
	f, err := root.Open(filepath.FromSlash(dir))
	if err != nil {
		return false
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dirs[dir] != nil {
		f.Close()
		return true
	}
	if len(o.dirs) >= maxOpenDirs {
		// Full: close one at random (a map's order is), so folders asked
		// about once cannot keep the busy ones out for good (a site's
		// cas/ folders after many reports' own).
		for k, d := range o.dirs {
			d.Close()
			delete(o.dirs, k)
			break
		}
	}
	if o.dirs == nil {
		o.dirs = map[string]*os.File{}
	}
	o.dirs[dir] = f
	return true
}

// drop closes and forgets dir's folder d (removed since it was opened).
func (o *openDirs) drop(dir string, d *os.File) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dirs[dir] == d {
		d.Close()
		delete(o.dirs, dir)
	}
}

// close closes every folder kept open.
func (o *openDirs) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, d := range o.dirs {
		d.Close()
		delete(o.dirs, k)
	}
}
