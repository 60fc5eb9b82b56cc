package watch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// event handles one fsnotify event. It never blocks on the disk for long:
// one Lstat for a Create, to tell a new folder from a new file.
func (r *runner) event(ev fsnotify.Event) {
	path := filepath.Clean(ev.Name)
	root := r.opts.rootOf(path)
	if root == "" {
		return
	}
	now := r.now()
	if r.opts.sites {
		r.siteEvent(ev, root, path, now)
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// The name is gone (a rename's new name arrives as a Create).
		r.tracker.forget(path)
		if ev.Has(fsnotify.Rename) {
			r.pub.renames.note(path, now)
		}
		if r.dirs.watched[path] {
			r.unwatched(path)
		}
		return
	case ev.Has(fsnotify.Create):
		fi, err := os.Lstat(path)
		if err != nil {
			return
		}
		if fi.IsDir() {
			if r.opts.recursive && r.filter.dir(root, path) {
				// Files created before the watch was added sent no
				// events: the scan in addTree finds them.
				r.addTree(root, path, offerFiles)
				// A folder renamed inside the tree arrives here under its
				// new name while fsnotify is still dropping the watch of
				// its old name (IN_MOVE_SELF), which may take ours with
				// it. Watch and scan it once more a moment later.
				r.dirs.recheck[path] = now.Add(recheckAfter)
			}
			return
		}
	case ev.Has(fsnotify.Write):
	default:
		return // Chmod: the content did not change
	}
	if why := r.filter.reason(root, path); why != "" {
		r.skip(path, why)
		return
	}
	if r.inflight[path] {
		r.dirty[path] = true
		return
	}
	delete(r.retries, path) // it changed: it settles again first
	if r.tracker.touch(path, now) {
		r.settling(path)
		r.seen(path)
	}
}

func (r *runner) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		r.log.emit(Event{Event: evOverflow, Message: "events were lost (raise fs.inotify.max_queued_events); rescanning"})
		r.rescan()
		return
	}
	r.log.emit(Event{Event: evWarning, Message: "watcher error", Error: err.Error()})
}

// recheckAfter is how long after a folder appears it is watched and
// scanned once more (see event).
const recheckAfter = 250 * time.Millisecond

// unwatched forgets dir and the folders below it: their watches went with
// a rename or removal, and a folder coming back under that name is new.
func (r *runner) unwatched(dir string) {
	for p := range r.dirs.watched {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			delete(r.dirs.watched, p)
		}
	}
}
