package local

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"runtime"
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

// maxOpenDirs bounds the folders kept open (past it, one is forgotten
// for each opened).
const maxOpenDirs = 1024

type openDirs struct {
	mu   sync.RWMutex
	dirs map[string]*os.File
}

// statFast describes key's regular file, or tells it is missing; ok is
// false when the root's path must decide.
func (s *Store) statFast(key string) (info blob.Info, found, ok bool) {
	dir, name := path.Split(key)
	if dir == "" {
		return blob.Info{}, false, false
	}
	d := s.open.get(s.root, dir)
	if d == nil {
		return blob.Info{}, false, false
	}
	var st, ds unix.Stat_t
	err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	live := errors.Is(err, unix.ENOENT) && unix.Fstat(int(d.Fd()), &ds) == nil && ds.Nlink > 0
	// d stays reachable until its descriptor is used no more: a drop by
	// another Stat leaves it to the garbage collector, which would close
	// it (and the number be reused) under these calls.
	runtime.KeepAlive(d)
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG:
		return blob.Info{Key: key, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix())}, true, true
	case live:
		return blob.Info{}, false, true
	case errors.Is(err, unix.ENOENT):
		s.open.drop(dir, d)
	}
	return blob.Info{}, false, false
}

// get returns dir's open folder, opening it if need be (nil: cannot).
func (o *openDirs) get(root *os.Root, dir string) *os.File {
	o.mu.RLock()
	d := o.dirs[dir]
	o.mu.RUnlock()
	if d != nil {
		return d
	}
	f, err := root.Open(filepath.FromSlash(dir))
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if d := o.dirs[dir]; d != nil {
		f.Close()
		return d
	}
	if len(o.dirs) >= maxOpenDirs {
		// Full: forget one at random (a map's order is), so folders
		// asked about once cannot keep the busy ones out for good (a
		// site's cas/ folders after many reports' own). Not closed, as
		// in drop.
		for k := range o.dirs {
			delete(o.dirs, k)
			break
		}
	}
	if o.dirs == nil {
		o.dirs = map[string]*os.File{}
	}
	o.dirs[dir] = f
	return f
}

// drop forgets dir's folder d (removed since it was opened).
func (o *openDirs) drop(dir string, d *os.File) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dirs[dir] == d {
		delete(o.dirs, dir)
		// Not closed: a concurrent statFast may still use it (it keeps it
		// reachable meanwhile); the garbage collector closes it after,
		// and the next get opens the folder afresh.
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
