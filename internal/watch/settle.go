package watch

import (
	"io/fs"
	"os"
	"time"
)

// tracker holds files that are not finished yet. A file is finished when its
// size and mtime have not changed for `settle`; one that keeps changing is
// let go after `maxWait`, so a log-like file is still published. fsnotify has
// no portable close-write event, so stability is the only signal: events
// only reset the clock, and every tick re-stats the file to catch writes
// whose events were lost.
type tracker struct {
	settle, maxWait time.Duration
	files           map[string]*pending
	stat            func(string) (fs.FileInfo, error)
	// unit tells whether what stat saw is still publishable (a regular
	// file; a folder in sites mode).
	unit func(fs.FileInfo) bool
	// lazy: stat a file only when the clock says it may be finished (a
	// site's fingerprint walks the folder: not on every tick).
	lazy bool
	// busy, when set, reports which of the given paths some process still
	// holds open for writing; such files are not finished either.
	busy     func(paths []string) map[string]bool
	busyNext time.Time
	// onBusy, when set, hears once per file that it settled but is still
	// open for writing (watch -v).
	onBusy func(path string)
}

const busyEvery = 500 * time.Millisecond

type pending struct {
	size          int64
	mtime         time.Time
	statted       bool
	toldBusy      bool // onBusy was called
	first, change time.Time
}

// ready is a file judged finished, with the size and mtime it was judged at.
type ready struct {
	path   string
	size   int64
	mtime  time.Time
	change time.Time // when it last changed, for the latency figure
	forced bool      // let go by maxWait while still changing
}

func newTracker(settle, maxWait time.Duration) *tracker {
	return &tracker{settle: settle, maxWait: maxWait, files: map[string]*pending{}, stat: os.Lstat,
		unit: func(fi fs.FileInfo) bool { return fi.Mode().IsRegular() }}
}

// touch records that path changed now (an event arrived for it), and
// reports whether path is new to the tracker.
func (t *tracker) touch(path string, now time.Time) bool {
	if p, ok := t.files[path]; ok {
		p.change = now
		return false
	}
	t.files[path] = &pending{first: now, change: now}
	return true
}

// addSince starts tracking path, unchanged since `since`, if it is not
// tracked yet; a rescan uses it so that it never restarts the clock of a
// file already settling. It reports whether path is new to the tracker.
func (t *tracker) addSince(path string, fi fs.FileInfo, since, now time.Time) bool {
	if _, ok := t.files[path]; ok {
		return false
	}
	p := &pending{first: now, change: since}
	if fi != nil {
		p.size, p.mtime, p.statted = fi.Size(), fi.ModTime(), true
	}
	t.files[path] = p
	return true
}

func (t *tracker) forget(path string)                       { delete(t.files, path) }
func (t *tracker) has(path string) bool                     { _, ok := t.files[path]; return ok }
func (t *tracker) len() int                                 { return len(t.files) }
func (t *tracker) empty() bool                              { return len(t.files) == 0 }
func (t *tracker) settledAt(now time.Time, p *pending) bool { return now.Sub(p.change) >= t.settle }

// due stats every tracked file and returns the finished ones, removing them.
// Files that vanished or stopped being regular files are dropped.
func (t *tracker) due(now time.Time) []ready {
	var out []ready
	var candidates []string
	for path, p := range t.files {
		if t.lazy && p.statted && !t.settledAt(now, p) && now.Sub(p.first) < t.maxWait {
			continue
		}
		fi, err := t.stat(path)
		if err != nil || !t.unit(fi) {
			delete(t.files, path)
			continue
		}
		if p.statted && (fi.Size() != p.size || !fi.ModTime().Equal(p.mtime)) {
			// The write happened at its mtime, not at this tick; an
			// mtime from the future (clock skew) counts as now.
			at := fi.ModTime()
			if at.After(now) {
				at = now
			}
			if at.After(p.change) {
				p.change = at
			}
		}
		p.size, p.mtime, p.statted = fi.Size(), fi.ModTime(), true
		if t.settledAt(now, p) || now.Sub(p.first) >= t.maxWait {
			candidates = append(candidates, path)
		}
	}
	var busy map[string]bool
	if t.busy != nil && len(candidates) > 0 {
		if now.Before(t.busyNext) {
			// A file was held open at the last look: look again (and let
			// everything through) only every busyEvery, so a writer that
			// never closes its file does not cost a /proc walk per tick.
			return nil
		}
		began := time.Now()
		busy = t.busy(candidates)
		// The /proc walk costs milliseconds, more on a loaded host: keep
		// it to about a fifth of the loop's time.
		t.busyNext = now.Add(4 * time.Since(began))
		if len(busy) > 0 {
			t.busyNext = now.Add(max(busyEvery, 4*time.Since(began)))
		}
	}
	for _, path := range candidates {
		p := t.files[path]
		forced := !t.settledAt(now, p)
		if busy[path] && now.Sub(p.first) < t.maxWait {
			// Still open for writing: a slow writer that paused for
			// longer than --settle. Look again next tick.
			if t.onBusy != nil && !p.toldBusy {
				p.toldBusy = true
				t.onBusy(path)
			}
			continue
		}
		forced = forced || busy[path]
		out = append(out, ready{path: path, size: p.size, mtime: p.mtime, change: p.change, forced: forced})
		delete(t.files, path)
	}
	return out
}
