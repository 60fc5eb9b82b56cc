package watch

import (
	"context"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

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
	now     func() time.Time
	dirs    folders // what is watched (scan.go, fsevents.go)

	known    map[string]stat      // published or given-up versions, for cheap rescans
	inflight map[string]bool      // finished and waiting for, or with, a worker: never queued twice
	dirty    map[string]bool      // changed while in flight: look again after
	readyQ   []job                // finished, waiting for a free worker
	retries  map[string]retryWait // waiting for a backoff or for the server
	seenCh   chan string          // to the persister: new files for the queue bucket

	started bool // the start-up scan is done
	wasIdle bool
	found   int // files that passed the filter (for --once's exit code 4)

	// circuit is the outage breaker (circuit.go): while it is open nothing
	// is sent, and a probe (Ping) decides when the server is back.
	circuit *circuit

	// skipped remembers what -v said about a path, so that a file written
	// in many events is explained once (bounded: cleared when full).
	skipped map[string]string

	failures int // --once: files that could not be published this run
	bg       sync.WaitGroup

	// authErr is the 401 that ends the run (auth.go); nil while uploads
	// are accepted.
	authErr error
}

func newRunner(o *options, svc report.Service, st *store, flt *filter, log *eventLog) *runner {
	tr := newTracker(o.settle, o.maxWait)
	tr.stat, tr.unit, tr.lazy = o.unitStat, o.isUnit, o.sites
	if o.waitForWriters {
		tr.busy = openForWriting
		if o.sites {
			tr.busy = foldersOpenForWriting
		}
	}
	if o.verbose {
		tr.onBusy = func(path string) {
			log.emit(Event{Event: evWaiting, Path: path, Message: "still open for writing by a process: sent once it is closed (or after --max-wait)"})
		}
	}
	r := &runner{
		opts: o, log: log, filter: flt, tracker: tr, store: st, now: time.Now,
		inflight: map[string]bool{}, dirty: map[string]bool{}, retries: map[string]retryWait{}, skipped: map[string]string{},
		dirs: folders{watched: map[string]bool{}, recheck: map[string]time.Time{}},
	}
	r.circuit = newCircuit(clockFunc(r.now), o.retryMin, min(o.retryMax, maxProbeInterval))
	r.pub = &publisher{opts: o, svc: svc, store: st, projects: &projects{svc: svc, opts: o}, log: log, now: time.Now}
	return r
}

// folders is the fsnotify side of a run.
type folders struct {
	fsw      *fsnotify.Watcher    // nil with --poll and --once
	watched  map[string]bool      // folders with a watch
	recheck  map[string]time.Time // new folders to watch (and scan) again, see event
	announce bool                 // log each folder as it is watched
	fallback bool                 // some folder could not be watched: rescan often
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
	if r.dirs.fsw != nil {
		events, errs = r.dirs.fsw.Events, r.dirs.fsw.Errors
	}

loop:
	for {
		var out chan<- job
		var next job
		if len(r.readyQ) > 0 && !r.circuit.down() {
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
		if r.opts.once && (r.circuit.down() || r.idle()) {
			break loop
		}
		if r.authErr != nil {
			break loop
		}
		r.noteIdle()
	}
	return r.stop(ctx, jobs, results, &workers, cancelUploads, persisted)
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
