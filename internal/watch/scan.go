package watch

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// What addTree does with the files it finds.
type scanMode int

const (
	offerFiles    scanMode = iota // offer new and changed files to the pipeline
	baselineFiles                 // --initial-scan=skip: remember them as they are
)

// addTree watches dir (and, when recursive, every folder below it) and
// offers every file in it to the pipeline. Each folder's watch is added
// before the folder is listed, so a file created in between is seen either
// by the listing or by an event (or both; the tracker dedupes).
func (r *runner) addTree(root, dir string, mode scanMode) int {
	if r.opts.sites {
		return r.addSiteTree(root, dir, mode)
	}
	found := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				r.log.emit(Event{Event: evWarning, Dir: path, Message: "cannot read folder", Error: err.Error()})
			}
			return nil
		}
		if d.IsDir() {
			if !r.filter.dir(root, path) {
				return filepath.SkipDir
			}
			if path != root && !r.opts.recursive {
				return filepath.SkipDir
			}
			r.watch(path)
			return nil
		}
		if !d.Type().IsRegular() {
			r.skip(path, "not a regular file")
			return nil
		}
		if why := r.filter.reason(root, path); why != "" {
			r.skip(path, why)
			return nil
		}
		found++
		if mode == baselineFiles {
			r.baseline(path, d)
		} else {
			r.offerScanned(path, d)
		}
		return nil
	})
	return found
}

// watch adds an fsnotify watch, explaining the kernel limit when it is hit
// and falling back to frequent rescans so that nothing is missed meanwhile.
func (r *runner) watch(dir string) {
	if r.dirs.fsw == nil {
		return
	}
	err := r.dirs.fsw.Add(dir)
	if err == nil {
		if r.dirs.announce && !r.dirs.watched[dir] {
			r.log.emit(Event{Event: evWatching, Dir: dir})
		}
		r.dirs.watched[dir] = true
		return
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		r.log.emit(Event{Event: evError, Dir: dir, Error: err.Error(),
			Message: "inotify watch limit reached: raise it with `sysctl fs.inotify.max_user_watches=524288` (persist in /etc/sysctl.d/); rescanning every " + fallbackRescan.String() + " meanwhile"})
		r.dirs.fallback = true
	case errors.Is(err, syscall.EMFILE):
		r.log.emit(Event{Event: evError, Dir: dir, Error: err.Error(),
			Message: "too many inotify instances: raise `sysctl fs.inotify.max_user_instances`; rescanning every " + fallbackRescan.String() + " meanwhile"})
		r.dirs.fallback = true
	default:
		r.log.emit(Event{Event: evWarning, Dir: dir, Message: "cannot watch folder", Error: err.Error()})
	}
}

// fallbackRescan is the rescan period while some folder could not be watched.
const fallbackRescan = 10 * time.Second

// offerScanned puts a file found by a scan into the tracker, unless it is the
// version already published (or given up on), or already on its way.
func (r *runner) offerScanned(path string, d fs.DirEntry) {
	if r.inflight[path] || r.tracker.has(path) {
		return
	}
	if _, waiting := r.retries[path]; waiting {
		return
	}
	fi, err := d.Info()
	if err != nil {
		return
	}
	// A published file that --on-success should have moved or deleted is
	// offered anyway, so the action cut short by a restart is finished.
	if k, ok := r.known[path]; ok && k.size == fi.Size() && k.mtime == fi.ModTime().UnixNano() && r.opts.onSuccess.kind == "keep" {
		return
	}
	now := r.now()
	if r.tracker.addSince(path, fi, r.stableSince(fi, now), now) {
		r.seen(path)
	}
}

// baseline records a file that was there before an --initial-scan=skip
// start as known, so that later rescans leave it alone until it changes.
func (r *runner) baseline(path string, d fs.DirEntry) {
	if _, ok := r.known[path]; ok || r.tracker.has(path) {
		return
	}
	if fi, err := d.Info(); err == nil {
		r.known[path] = stat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	}
}

// rescan looks at every watched folder again: after an event overflow, on
// --rescan-interval and --poll, and in fallback mode.
func (r *runner) rescan() {
	n := 0
	for _, root := range r.opts.roots {
		n += r.addTree(root, root, offerFiles)
	}
	r.log.emit(Event{Event: evScan, Count: n})
}

func (r *runner) rescanEvery() time.Duration {
	d := r.opts.rescan
	if r.opts.poll > 0 {
		d = r.opts.poll
	}
	if r.dirs.fallback && (d <= 0 || d > fallbackRescan) {
		d = fallbackRescan
	}
	if d <= 0 {
		d = 100 * 365 * 24 * time.Hour // never
	}
	return d
}

// addSiteTree is addTree in sites mode: it watches every folder (inside a
// site folder all of them, whatever the filters say, since all their files
// go into the site) and offers the site folders it meets as units.
func (r *runner) addSiteTree(root, dir string, mode scanMode) int {
	sites := map[string]bool{}
	var order []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				r.log.emit(Event{Event: evWarning, Dir: path, Message: "cannot read folder", Error: err.Error()})
			}
			return nil
		}
		site, inSite := r.opts.siteOf(root, path)
		if !inSite {
			if !d.IsDir() {
				r.skip(path, "not inside a site folder (--sites publishes folders)")
				return nil
			}
			if !r.filter.dir(root, path) {
				return filepath.SkipDir
			}
			r.watch(path)
			return nil
		}
		if site == path && !d.IsDir() {
			r.skip(path, "not inside a site folder (--sites publishes folders)")
			return nil
		}
		if site == path && r.filter.siteReason(root, site) != "" {
			r.skip(site, r.filter.siteReason(root, site))
			return filepath.SkipDir
		}
		if d.IsDir() {
			r.watch(path)
		}
		if !sites[site] {
			sites[site] = true
			order = append(order, site)
		}
		return nil
	})
	found := 0
	for _, site := range order {
		if r.offerSite(root, site, mode) {
			found++
		}
	}
	return found
}
