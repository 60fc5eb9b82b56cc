package watch

import (
	"io/fs"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// siteEvent is event in sites mode: whatever changes inside a site folder
// changes the site.
func (r *runner) siteEvent(ev fsnotify.Event, root, path string, now time.Time) {
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	if gone && r.dirs.watched[path] {
		r.unwatched(path)
	}
	site, inSite := r.opts.siteOf(root, path)
	if gone && (!inSite || site == path) {
		// A site folder (or a project folder holding some) went away.
		for p := range r.tracker.files {
			if p == path || isBelow(path, p) {
				r.tracker.forget(p)
			}
		}
		if ev.Has(fsnotify.Rename) {
			r.pub.renames.note(path, now)
		}
		return
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			// A new site, project or sub-folder: watch it (a scan finds
			// what was created before the watch; it offers the site).
			r.addTree(root, path, offerFiles)
			r.dirs.recheck[path] = now.Add(recheckAfter)
			return
		}
	}
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !gone {
		return // Chmod: the content did not change
	}
	if !inSite || site == path {
		r.skip(path, "not inside a site folder (--sites publishes folders)")
		return
	}
	r.touchSite(root, site, now)
}

// touchSite notes that something in site changed now.
func (r *runner) touchSite(root, site string, now time.Time) {
	if why := r.filter.siteReason(root, site); why != "" {
		r.skip(site, why)
		return
	}
	if !r.opts.hasMarker(site) {
		r.skip(site, "waiting for the marker file "+r.opts.marker)
		return
	}
	if r.inflight[site] {
		r.dirty[site] = true
		return
	}
	delete(r.retries, site)
	if r.opts.marker != "" && !r.tracker.has(site) {
		// The writer says it is done: no need to wait for --settle.
		r.tracker.addSince(site, nil, now.Add(-r.opts.settle), now)
		r.settling(site)
		r.seen(site)
		return
	}
	if r.tracker.touch(site, now) {
		r.settling(site)
		r.seen(site)
	}
}

// offerSite is offerScanned for a site folder found by a scan.
func (r *runner) offerSite(root, site string, mode scanMode) bool {
	if why := r.filter.siteReason(root, site); why != "" {
		r.skip(site, why)
		return false
	}
	if !r.opts.hasMarker(site) {
		r.skip(site, "waiting for the marker file "+r.opts.marker)
		return false
	}
	if r.inflight[site] || r.tracker.has(site) {
		return true
	}
	if _, waiting := r.retries[site]; waiting {
		return true
	}
	fi, err := siteStat(site)
	if err != nil || !fi.IsDir() {
		return false
	}
	if mode == baselineFiles {
		if _, ok := r.known[site]; !ok {
			r.known[site] = statOf(fi)
		}
		return true
	}
	if k, ok := r.known[site]; ok && k == statOf(fi) && r.opts.onSuccess.kind == "keep" {
		return true
	}
	now := r.now()
	since := r.stableSince(fi, now)
	if r.opts.marker != "" {
		since = now.Add(-r.opts.settle)
	}
	if r.tracker.addSince(site, fi, since, now) {
		r.seen(site)
	}
	return true
}

func isBelow(dir, path string) bool {
	return len(path) > len(dir) && path[:len(dir)] == dir && os.IsPathSeparator(path[len(dir)])
}

var _ fs.FileInfo = siteInfo{}
