package office

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// Config is what the LibreOffice engine reads of convert.Config (the
// Manager fills it from the settings table's convert.* keys). The engine
// keeps the pointer it is given: a change shows at the next job.
type Config struct {
	SofficePath      string        // convert.soffice_path
	PythonPath       string        // convert.python_path: python3 with the uno module
	Workers          int           // convert.office_workers: the main pool's workers
	QueueSize        int           // convert.queue_size: jobs that may wait per pool
	JobTimeout       time.Duration // convert.job_timeout
	MaxJobsPerWorker int           // convert.max_jobs_per_worker
	MaxWorkerRSS     int64         // convert.max_worker_rss
	DeckMaxBytes     int64         // convert.deck_max_bytes: what a .pptx may expand to (defuse.go)
	SmallDeckBytes   int64         // convert.small_deck_bytes: decks up to this size have their own worker (lanes.go); <=0: no lane
}

// Engine is the LibreOffice engine: the main pool of cfg.Workers workers
// and, with cfg.SmallDeckBytes > 0, the small-deck lane (lanes.go). Convert
// routes a deck to its lane, waits for that lane's gate (slots, queue,
// per-project fairness), defuses an Open XML deck (defuse.go) and has a
// worker convert the defused copy.
type Engine struct {
	cfg   *Config
	main  *office
	small *office // the small-deck lane, nil without one
}

// New makes the engine; it starts no process. Workers' directories go under
// workDir; box runs them (engine.Sandbox).
func New(cfg *Config, log *slog.Logger, met *engine.Metrics, box *engine.Sandbox, workDir string) *Engine {
	e := &Engine{cfg: cfg, main: newOffice(cfg, log, met, box, workDir, "office", cfg.Workers)}
	if cfg.SmallDeckBytes > 0 {
		e.small = newOffice(cfg, log, met, box, workDir, "office-small", 1)
	}
	return e
}

// Usable reports why the engine cannot run here (LibreOffice or python3-uno
// missing, the sandbox unavailable), or nil. It starts no worker.
func (e *Engine) Usable() error { return e.main.usable() }

// Missing says why LibreOffice cannot run here at all (soffice or
// python3-uno not installed), or nil; Usable adds the sandbox.
func (e *Engine) Missing() error { return e.main.missing }

// Start launches the workers of both lanes; each warms its soffice at once.
func (e *Engine) Start() {
	for _, p := range e.pools() {
		p.start()
	}
}

// Close stops every worker, killing its process group, and waits for them.
func (e *Engine) Close() {
	var wg sync.WaitGroup
	for _, p := range e.pools() {
		wg.Add(1)
		go func() { defer wg.Done(); p.close() }()
	}
	wg.Wait()
}

// Convert turns the presentation of type typ at src into a PDF at out,
// under ctx (the Manager's life; a job's own deadline is cfg.JobTimeout).
// A .pptx first goes through defuseDeck, and LibreOffice reads only the
// defused copy. Errors are *report.Error; the engine's own faults are
// marked engine.Fault.
func (e *Engine) Convert(ctx context.Context, project int64, typ report.FileType, src, out string) error {
	pool := e.lane(src)
	if err := pool.usable(); err != nil {
		return err
	}
	leave, err := pool.gate.Enter(ctx, project)
	if err != nil {
		return err
	}
	defer leave()
	in := src
	if typ.Info().Container == report.ContainerZip { // an Open XML package
		in = out + typ.Ext()
		defer os.Remove(in)
		lim := deckLimits{maxBytes: e.cfg.DeckMaxBytes, maxEntries: defaultDeckEntries,
			ratio: defaultDeckRatio, ratioFloor: defaultDeckRatioFloor}
		if err := defuseDeck(src, in, lim); err != nil {
			return err
		}
	}
	return pool.convert(ctx, typ, in, out)
}

// Gate is the main pool's gate, for tests that fill it.
func (e *Engine) Gate() *engine.Gate { return e.main.gate }

// Done counts the conversions the workers of both lanes ran, for tests.
func (e *Engine) Done() int64 {
	var n int64
	for _, p := range e.pools() {
		n += p.done.Load()
	}
	return n
}

// Restarts counts the worker processes of both lanes replaced, for tests.
func (e *Engine) Restarts() int64 {
	var n int64
	for _, p := range e.pools() {
		n += p.restarts.Load()
	}
	return n
}

// RSS is the resident memory, in bytes, of every worker's helper and
// soffice (Manager.EngineRSS).
func (e *Engine) RSS() int64 {
	var rss int64
	for _, p := range e.pools() {
		for _, w := range p.workers {
			rss += engine.TreeRSS(int(w.pid.Load()))
		}
	}
	return rss
}

// WorkerPIDs lists, for each worker of the main pool and then the small
// lane, the process leading its group (bwrap, or unsandboxed the helper)
// and its soffice, as seen from here; 0 for a worker not running. For
// tests that check the processes end.
func (e *Engine) WorkerPIDs() (helpers, soffices []int) {
	for _, p := range e.pools() {
		for _, w := range p.workers {
			helpers = append(helpers, int(w.pid.Load()))
			soffices = append(soffices, int(w.sofficePID.Load()))
		}
	}
	return helpers, soffices
}

func (e *Engine) pools() []*office {
	if e.small == nil {
		return []*office{e.main}
	}
	return []*office{e.main, e.small}
}
