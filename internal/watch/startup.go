package watch

import (
	"os"
	"time"
)

// start loads the queue left by an earlier run, adds the watches and makes
// the start-up scan.
func (r *runner) start() {
	now := r.now()
	r.resumed()
	r.known = r.store.fileStats()
	for path := range r.store.queue() {
		root := r.opts.rootOf(path)
		if root == "" || !r.mine(root, path) {
			continue // not watched by this run (other folders, filters or mode): keep it
		}
		fi, err := r.opts.unitStat(path)
		if err != nil || !r.opts.isUnit(fi) {
			_ = r.store.dequeue(path)
			continue
		}
		// Queued files always go out, whatever --initial-scan says: they
		// were seen by an earlier run and never published.
		r.found++
		r.tracker.addSince(path, fi, r.stableSince(fi, now), now)
	}
	mode := offerFiles
	if !r.opts.once && r.opts.initialScan == "skip" {
		mode = baselineFiles
	}
	r.dirs.announce = true
	n := 0
	for _, root := range r.opts.roots {
		n += r.addTree(root, root, mode)
	}
	r.found += n
	if mode == offerFiles {
		r.log.emit(Event{Event: evScan, Count: n})
	}
	r.started = true
}

// mine reports whether path, a queued unit under root, is for this run: a
// file the filter passes, or in sites mode a site folder.
func (r *runner) mine(root, path string) bool {
	if !r.opts.sites {
		return r.filter.file(root, path)
	}
	site, ok := r.opts.siteOf(root, path)
	if !ok || site != path || r.filter.siteReason(root, path) != "" || !r.opts.hasMarker(path) {
		return false
	}
	fi, err := os.Lstat(path)
	return err != nil || fi.IsDir() // a file's entry is a files-mode run's; a vanished one is dropped
}

// stableSince is when a file found by a scan last changed, as far as we can
// tell: its mtime when that is at least --settle old, else now.
func (r *runner) stableSince(fi os.FileInfo, now time.Time) time.Time {
	m := fi.ModTime()
	if m.After(now) || now.Sub(m) < r.opts.settle {
		return now
	}
	return m
}
