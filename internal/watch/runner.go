package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

// runner is the pipeline of one `reportctl watch` run. Every field below is
// owned by the goroutine in loop; workers talk to it only through channels.
type runner struct {
	opts    *options
	log     *eventLog
	filter  *filter
	tracker *tracker
	store   *store
	pub     *publisher
	fsw     *fsnotify.Watcher // nil with --poll and --once
	now     func() time.Time

	known    map[string]stat      // published or given-up versions, for cheap rescans
	inflight map[string]bool      // finished and waiting for, or with, a worker: never queued twice
	dirty    map[string]bool      // changed while in flight: look again after
	readyQ   []job                // finished, waiting for a free worker
	retries  map[string]retryWait // waiting for a backoff or for the server
	seenCh   chan string          // to the persister: new files for the queue bucket
	watched  map[string]bool      // folders with a watch
	recheck  map[string]time.Time // new folders to watch (and scan) again, see event

	announce bool // log each folder as it is watched
	fallback bool // some folder could not be watched: rescan often
	started  bool // the start-up scan is done
	wasIdle  bool
	found    int // files that passed the filter (for --once's exit code 4)

	// The outage circuit: while down, nothing is sent; a probe (Ping) on a
	// capped exponential schedule decides when the server is back.
	down     bool
	probing  bool
	probeAt  time.Time
	probeN   int
	outages  int // consecutive, reset by a successful publish
	lastDown error

	failures int // --once: files that could not be published this run
	bg       sync.WaitGroup
}

func newRunner(o *options, svc report.Service, st *store, flt *filter, log *eventLog) *runner {
	tr := newTracker(o.settle, o.maxWait)
	if o.waitForWriters {
		tr.busy = openForWriting
	}
	r := &runner{
		opts: o, log: log, filter: flt, tracker: tr, store: st, now: time.Now,
		inflight: map[string]bool{}, dirty: map[string]bool{}, retries: map[string]retryWait{},
		watched: map[string]bool{}, recheck: map[string]time.Time{},
	}
	r.pub = &publisher{opts: o, svc: svc, store: st, projects: &projects{svc: svc, opts: o}, log: log, now: time.Now}
	return r
}

type retryWait struct {
	due  time.Time
	fail failure
}

func (r *runner) tickEvery() time.Duration {
	d := r.opts.settle / 20
	return max(10*time.Millisecond, min(d, 50*time.Millisecond))
}

// run starts the watches and the workers, then runs the loop until ctx is
// done (or, with --once, until everything found has been dealt with).
func (r *runner) run(ctx context.Context) error {
	uploadCtx, cancelUploads := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelUploads()

	r.seenCh = make(chan string, 4096)
	persisted := make(chan struct{})
	go r.persist(persisted)

	jobs := make(chan job)
	results := make(chan result, r.opts.jobs)
	var workers sync.WaitGroup
	for range r.opts.jobs {
		workers.Go(func() {
			for j := range jobs {
				results <- r.pub.publish(uploadCtx, j)
			}
		})
	}
	if len(r.store.owedDeletes()) > 0 {
		workers.Go(func() { r.pub.payDeletes(uploadCtx) })
	}

	r.start()
	probeRes := make(chan error, 1)
	tick := time.NewTicker(r.tickEvery())
	defer tick.Stop()
	rescan := time.NewTimer(r.rescanEvery())
	defer rescan.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if r.fsw != nil {
		events, errs = r.fsw.Events, r.fsw.Errors
	}

loop:
	for {
		var out chan<- job
		var next job
		if len(r.readyQ) > 0 && !r.down {
			out, next = jobs, r.readyQ[0]
		}
		select {
		case <-ctx.Done():
			break loop
		case ev, ok := <-events:
			if ok {
				r.event(ev)
			}
		case err, ok := <-errs:
			if ok {
				r.watchError(err)
			}
		case out <- next:
			r.readyQ = r.readyQ[1:]
		case res := <-results:
			r.result(res)
		case err := <-probeRes:
			r.probed(err, uploadCtx)
		case <-tick.C:
			r.tick(uploadCtx, probeRes)
		case <-rescan.C:
			r.rescan()
			rescan.Reset(r.rescanEvery())
		}
		if r.opts.once && (r.down || r.idle()) {
			break loop
		}
		r.noteIdle()
	}
	return r.stop(ctx, jobs, results, &workers, cancelUploads, persisted)
}

// start loads the queue left by an earlier run, adds the watches and makes
// the start-up scan.
func (r *runner) start() {
	now := r.now()
	r.known = r.store.fileStats()
	for path := range r.store.queue() {
		root := r.opts.rootOf(path)
		if root == "" || !r.filter.file(root, path) {
			continue // not watched by this run (other folders or filters): keep it
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
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
	r.announce = true
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

// stableSince is when a file found by a scan last changed, as far as we can
// tell: its mtime when that is at least --settle old, else now.
func (r *runner) stableSince(fi os.FileInfo, now time.Time) time.Time {
	m := fi.ModTime()
	if m.After(now) || now.Sub(m) < r.opts.settle {
		return now
	}
	return m
}

func (r *runner) rescanEvery() time.Duration {
	d := r.opts.rescan
	if r.opts.poll > 0 {
		d = r.opts.poll
	}
	if r.fallback && (d <= 0 || d > fallbackRescan) {
		d = fallbackRescan
	}
	if d <= 0 {
		d = 100 * 365 * 24 * time.Hour // never
	}
	return d
}

// event handles one fsnotify event. It never blocks on the disk for long:
// one Lstat for a Create, to tell a new folder from a new file.
func (r *runner) event(ev fsnotify.Event) {
	path := filepath.Clean(ev.Name)
	root := r.opts.rootOf(path)
	if root == "" {
		return
	}
	now := r.now()
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// The name is gone (a rename's new name arrives as a Create).
		r.tracker.forget(path)
		if ev.Has(fsnotify.Rename) {
			r.pub.renames.note(path, now)
		}
		if r.watched[path] {
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
				r.recheck[path] = now.Add(recheckAfter)
			}
			return
		}
	case ev.Has(fsnotify.Write):
	default:
		return // Chmod: the content did not change
	}
	if !r.filter.file(root, path) {
		return
	}
	if r.inflight[path] {
		r.dirty[path] = true
		return
	}
	delete(r.retries, path) // it changed: it settles again first
	if r.tracker.touch(path, now) {
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

// tick moves finished files to the workers, releases due retries and
// probes the server while it is down.
func (r *runner) tick(ctx context.Context, probeRes chan<- error) {
	now := r.now()
	for _, rd := range r.tracker.due(now) {
		if r.inflight[rd.path] {
			r.dirty[rd.path] = true
			continue
		}
		if r.down {
			r.retries[rd.path] = retryWait{fail: unreachable}
			r.log.emit(Event{Event: evQueued, Path: rd.path})
			continue
		}
		// In flight from here on, so that neither an event nor a rescan
		// can queue a second job for it while it waits for a worker.
		r.inflight[rd.path] = true
		r.readyQ = append(r.readyQ, job{rd})
	}
	for path, at := range r.recheck {
		if now.Before(at) {
			continue
		}
		delete(r.recheck, path)
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			r.addTree(r.opts.rootOf(path), path, offerFiles)
		}
	}
	for path, w := range r.retries {
		if (w.fail == unreachable && r.down) || now.Before(w.due) {
			continue
		}
		delete(r.retries, path)
		fi, err := os.Lstat(path)
		if err != nil {
			_ = r.store.dequeue(path)
			continue
		}
		// Back through the tracker: ready at once if it has not changed
		// since it was last judged finished, else it settles again.
		r.tracker.addSince(path, fi, now.Add(-r.opts.settle), now)
	}
	if r.down && !r.probing && !now.Before(r.probeAt) {
		r.probing = true
		go func() {
			pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_, err := r.pub.svc.Ping(pctx)
			probeRes <- err
		}()
	}
}

func (r *runner) result(res result) {
	now := r.now()
	delete(r.inflight, res.path)
	switch res.kind {
	case resDone, resGaveUp:
		if res.stat != (stat{}) {
			r.known[res.path] = res.stat
		}
		if res.published {
			r.outages = 0
		}
		if res.kind == resGaveUp {
			r.failures++
		}
	case resUnstable:
		if res.published && res.stat != (stat{}) {
			r.known[res.path] = res.stat
		}
		r.tracker.touch(res.path, now)
	case resRetry:
		if res.fail == unreachable {
			r.goDown(res.err, now)
			r.retries[res.path] = retryWait{fail: unreachable}
			r.log.emit(Event{Event: evQueued, Path: res.path, Error: res.err.Error()})
			break
		}
		d := backoff(r.opts.retryMin, r.opts.retryMax, res.attempt)
		r.retries[res.path] = retryWait{due: now.Add(d), fail: res.fail}
		r.log.emit(Event{Event: evRetry, Path: res.path, Attempt: res.attempt, RetryIn: d.Round(time.Millisecond).String(), Error: res.err.Error()})
	}
	if r.dirty[res.path] {
		delete(r.dirty, res.path)
		delete(r.retries, res.path)
		r.tracker.touch(res.path, now)
	}
}

func (r *runner) idle() bool {
	return r.started && r.tracker.empty() && len(r.inflight) == 0 && len(r.readyQ) == 0 && len(r.retries) == 0
}

// noteIdle logs "idle" each time the pipeline drains: a point where every
// file seen so far is published, given up on, or ignored.
func (r *runner) noteIdle() {
	idle := r.idle()
	if idle && !r.wasIdle {
		r.log.emit(Event{Event: evIdle})
	}
	r.wasIdle = idle
}

// stop lets in-flight uploads finish (for at most --drain-timeout), records
// their outcome and the queue, and returns the run's error.
func (r *runner) stop(ctx context.Context, jobs chan job, results chan result, workers *sync.WaitGroup, cancelUploads context.CancelFunc, persisted chan struct{}) error {
	if !r.opts.once || ctx.Err() != nil {
		r.log.emit(Event{Event: evStopping, Count: len(r.inflight) - len(r.readyQ)})
	}
	close(jobs)
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	drain := time.NewTimer(r.opts.drainTimeout)
	defer drain.Stop()
wait:
	for {
		select {
		case res := <-results:
			r.result(res)
		case <-drain.C:
			cancelUploads()
		case <-done:
			break wait
		}
	}
	r.bg.Wait()
	close(r.seenCh)
	<-persisted
	if r.fsw != nil {
		_ = r.fsw.Close()
	}
	if !r.opts.once || ctx.Err() != nil {
		r.log.emit(Event{Event: evStopped})
	}
	if !r.opts.once {
		return nil
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case r.down:
		return exitcode.With(exitcode.Unreachable, fmt.Errorf("server unreachable, files stay queued for the next run: %w", r.lastDown))
	case r.failures > 0:
		return exitcode.With(exitcode.Failed, fmt.Errorf("%d file(s) could not be published", r.failures))
	case r.found == 0 && !r.opts.allowEmpty:
		return exitcode.With(exitcode.NoMatch, errors.New("no report files found (--allow-empty makes this a success)"))
	}
	return nil
}

const recheckAfter = 250 * time.Millisecond

// unwatched forgets dir and the folders below it: their watches went with
// a rename or removal, and a folder coming back under that name is new.
func (r *runner) unwatched(dir string) {
	for p := range r.watched {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			delete(r.watched, p)
		}
	}
}
