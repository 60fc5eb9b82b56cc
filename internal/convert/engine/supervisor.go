package engine

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// One supervisor runs each long-lived engine process: the Chromium browser
// and each LibreOffice worker's helper with its soffice. It is modelled on
// Gotenberg's pkg/gotenberg/supervisor.go: it starts the process when a use
// needs one, replaces one found dead, and retires one after
// recyclePolicy.maxJobs jobs or when its process tree uses more memory than
// recyclePolicy.maxRSS, measured after jobs (afterJob), once it has been idle
// a while (idleCheck) and, where the engine asks, during jobs (watch,
// memcap.go). A retired process takes no new use and is stopped once its last
// use ends. Every retirement counts a restart: the engine's counter and
// reportd_pdf_engine_restarts_total{engine,reason}.

// engineProc is one engine process as its supervisor sees it. Embedding
// procState provides state.
type engineProc interface {
	state() *procState
	rootPID() int // the process tree whose memory counts; 0 when unknown
	exited() bool // it died on its own (crashed, killed from outside)
}

// procState is the supervisor's bookkeeping of one process, under its mutex.
type procState struct {
	jobs     int  // jobs finished on it
	inflight int  // uses (jobs, page creations, warm-ups) not yet released
	retired  bool // takes no new use; stopped when inflight reaches 0
	stopOnce sync.Once
}

func (s *procState) state() *procState { return s }

// recyclePolicy says when a process is replaced after a job.
type recyclePolicy struct {
	maxJobs      int           // after this many jobs (convert.max_jobs_per_worker)
	maxRSS       int64         // when its tree is over this (convert.max_worker_rss); 0 = never
	measureEvery int           // memory is measured after every Nth job, and after every large one
	idleAfter    time.Duration // and once no job ended for this long; 0 = never
}

// afterJob decides what follows the jobs-th job (large: its input or output
// was large): retire for reason at once, or measure the memory first.
func (p recyclePolicy) afterJob(jobs int, large bool) (reason string, measure bool) {
	if jobs >= p.maxJobs {
		return "jobs", false
	}
	return "", p.maxRSS > 0 && (large || p.measureEvery <= 1 || jobs%p.measureEvery == 0)
}

// supervisor runs one process of type P at a time (plus retired ones
// finishing their jobs).
type supervisor[P engineProc] struct {
	name     string            // in logs: "Chromium", "LibreOffice worker"
	engine   string            // the restart metric's engine label
	policy   recyclePolicy     // when a process is replaced
	launch   func() (P, error) // starts a process; cleans up after itself on failure
	stop     func(P)           // kills a process and removes what it leaves
	replaced func()            // after a retirement for jobs or memory: start a successor ahead of the next job; nil = on demand
	log      *slog.Logger
	met      *metrics
	restarts *atomic.Int64 // the engine's count of retirements (tests read it)
	memcap   jobMemCap     // the cap during jobs; nil = none
	// overMem measures; overMemory, unless a test stands in.
	overMem func(pid int, limit int64) bool

	mu     sync.Mutex
	cur    P
	has    bool        // cur is set
	idle   *time.Timer // the idle check
	closed bool
}

// acquire returns the current process, starting one if there is none or
// the last one died. It counts the caller as a use; release undoes that.
func (s *supervisor[P]) acquire() (P, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has {
		if !s.cur.exited() {
			s.cur.state().inflight++
			return s.cur, nil
		}
		// Stopped before its successor starts (an office worker's next
		// process reuses its directory), unless jobs still use it.
		dead := s.cur
		if s.retireLocked(dead, "crash", fmt.Errorf("%s exited", s.name)) && dead.state().inflight == 0 {
			s.stopOnce(dead)
		}
	}
	var zero P
	if s.closed {
		return zero, report.Errorf(report.Unavailable, "conversion engines are shutting down")
	}
	p, err := s.launch()
	if err != nil {
		return zero, err
	}
	s.cur, s.has = p, true
	p.state().inflight++
	return p, nil
}

// warm starts a process ahead of the first job, if none runs.
func (s *supervisor[P]) warm() error {
	p, err := s.acquire()
	if err == nil {
		s.release(p, false, false)
	}
	return err
}

// running reports whether a process is up and not retired.
func (s *supervisor[P]) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has && !s.cur.state().retired
}

// current returns the process new uses get, if any.
func (s *supervisor[P]) current() (P, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.has
}

// hold counts one more use of p, unless p is retired or usable says no.
func (s *supervisor[P]) hold(p P, usable func() bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := p.state()
	if st.retired || !usable() {
		return false
	}
	st.inflight++
	return true
}

// release ends a use of p (job: a job ran on it, large: a large one) and
// retires p when the policy says so.
func (s *supervisor[P]) release(p P, job, large bool) {
	st := p.state()
	s.mu.Lock()
	st.inflight--
	reason, measure := "", false
	if job {
		st.jobs++
		if !st.retired {
			reason, measure = s.policy.afterJob(st.jobs, large)
		}
		s.armIdleLocked()
	}
	stop := st.retired && st.inflight == 0
	s.mu.Unlock()
	if stop {
		s.stopOnce(p)
	}
	// Measured outside the lock: reading /proc takes milliseconds that
	// other jobs should not wait for.
	if measure && s.overMem(p.rootPID(), s.policy.maxRSS) {
		reason = "memory"
	}
	if reason != "" && s.retire(p, reason, nil) && s.replaced != nil {
		go s.replaced()
	}
}

// retire stops handing out p, counting a restart for reason; p stops once
// its last use ends. It reports false when p was retired already.
func (s *supervisor[P]) retire(p P, reason string, err error) bool {
	s.mu.Lock()
	ok := s.retireLocked(p, reason, err)
	stop := ok && p.state().inflight == 0
	s.mu.Unlock()
	if stop {
		s.stopOnce(p)
	}
	return ok
}

// retireCurrent retires the current process, if any (engines that run one
// job at a time know no other).
func (s *supervisor[P]) retireCurrent(reason string, err error) {
	if p, ok := s.current(); ok {
		s.retire(p, reason, err)
	}
}

// retireLocked retires p and reports whether it was not retired before;
// the caller stops p if no use remains.
func (s *supervisor[P]) retireLocked(p P, reason string, err error) bool {
	st := p.state()
	if st.retired {
		return false
	}
	s.restarts.Add(1)
	s.met.restarted(s.engine, reason)
	if err != nil {
		s.log.Warn(s.name+" replaced", "reason", reason, "jobs", st.jobs, "err", err)
	} else {
		s.log.Info(s.name+" replaced", "reason", reason, "jobs", st.jobs)
	}
	if s.has && s.cur.state() == st {
		var zero P
		s.cur, s.has = zero, false
	}
	st.retired = true
	return true
}

func (s *supervisor[P]) stopOnce(p P) {
	p.state().stopOnce.Do(func() { s.stop(p) })
}

// close stops the current process at once, in use or not, counting no
// restart; nothing starts after it.
func (s *supervisor[P]) close() {
	s.mu.Lock()
	s.closed = true
	if s.idle != nil {
		s.idle.Stop()
	}
	p, had := s.cur, s.has
	if had {
		var zero P
		s.cur, s.has = zero, false
		p.state().retired = true
	}
	s.mu.Unlock()
	if had {
		s.stopOnce(p)
	}
}

// watch caps p's memory while a job runs on it, until end is called; mark
// is for stoppedSince after the job.
func (s *supervisor[P]) watch(p P) (mark int64, end func()) {
	if s.memcap == nil {
		return 0, func() {}
	}
	return s.memcap.begin(p.rootPID())
}

// stoppedSince reports whether the cap during jobs stopped a process since
// mark, and the memory it had then.
func (s *supervisor[P]) stoppedSince(mark int64) (bool, int64) {
	if s.memcap == nil {
		return false, 0
	}
	return s.memcap.stoppedSince(mark)
}

// armIdleLocked (re)starts the idle check's timer; s.mu is held.
func (s *supervisor[P]) armIdleLocked() {
	if s.policy.maxRSS <= 0 || s.policy.idleAfter <= 0 || s.closed {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(s.policy.idleAfter, s.idleCheck)
		return
	}
	s.idle.Reset(s.policy.idleAfter)
}

// idleCheck replaces the process when it is idle and over the memory bound.
// One still in use is left alone and checked again later: a job's release
// re-arms the timer, but a use that is not a job (a spare page being made)
// re-arms nothing, so the check re-arms itself.
func (s *supervisor[P]) idleCheck() {
	s.mu.Lock()
	if s.closed || !s.has {
		s.mu.Unlock()
		return
	}
	p := s.cur
	busy := p.state().inflight > 0
	if busy {
		s.armIdleLocked()
	}
	s.mu.Unlock()
	if busy || !s.overMem(p.rootPID(), s.policy.maxRSS) {
		return
	}
	if s.retire(p, "memory", nil) && s.replaced != nil {
		s.replaced()
	}
}
