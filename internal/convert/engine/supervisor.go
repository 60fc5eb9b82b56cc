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
// RecyclePolicy.MaxJobs jobs or when its process tree uses more memory than
// RecyclePolicy.MaxRSS, measured after jobs (afterJob), once it has been idle
// a while (idleCheck) and, where the engine asks, during jobs (Watch,
// memcap.go). A retired process takes no new use and is stopped once its last
// use ends. Every retirement counts a restart: the engine's counter and
// reportd_pdf_engine_restarts_total{engine,reason}.

// Proc is one engine process as its supervisor sees it. Embedding
// ProcState provides state.
type Proc interface {
	State() *ProcState
	RootPID() int // the process tree whose memory counts; 0 when unknown
	Exited() bool // it died on its own (crashed, killed from outside)
}

// ProcState is the supervisor's bookkeeping of one process, under its mutex.
type ProcState struct {
	jobs     int  // jobs finished on it
	inflight int  // uses (jobs, page creations, warm-ups) not yet released
	retired  bool // takes no new use; stopped when inflight reaches 0
	stopOnce sync.Once
}

// State returns s; a process embedding ProcState has it so.
func (s *ProcState) State() *ProcState { return s }

// RecyclePolicy says when a process is replaced after a job.
type RecyclePolicy struct {
	MaxJobs      int           // after this many jobs (convert.max_jobs_per_worker)
	MaxRSS       int64         // when its tree is over this (convert.max_worker_rss); 0 = never
	MeasureEvery int           // memory is measured after every Nth job, and after every large one
	IdleAfter    time.Duration // and once no job ended for this long; 0 = never
}

// afterJob decides what follows the jobs-th job (large: its input or output
// was large): retire for reason at once, or measure the memory first.
func (p RecyclePolicy) afterJob(jobs int, large bool) (reason string, measure bool) {
	if jobs >= p.MaxJobs {
		return "jobs", false
	}
	return "", p.MaxRSS > 0 && (large || p.MeasureEvery <= 1 || jobs%p.MeasureEvery == 0)
}

// Supervisor runs one process of type P at a time (plus retired ones
// finishing their jobs).
type Supervisor[P Proc] struct {
	Name     string            // in logs: "Chromium", "LibreOffice worker"
	Engine   string            // the restart metric's engine label
	Policy   RecyclePolicy     // when a process is replaced
	Launch   func() (P, error) // starts a process; cleans up after itself on failure
	Stop     func(P)           // kills a process and removes what it leaves
	Replaced func()            // after a retirement for jobs or memory: start a successor ahead of the next job; nil = on demand
	Log      *slog.Logger
	Met      *Metrics
	Restarts *atomic.Int64 // the engine's count of retirements (tests read it)
	MemCap   MemCap        // the cap during jobs; nil = none
	// OverMem measures; OverMemory, unless a test stands in.
	OverMem func(pid int, limit int64) bool
	// MeasureAsync measures after jobs in the background instead of before
	// Release returns: for a process that serves other jobs meanwhile and
	// whose tree is large to measure (a browser holding its spare pages:
	// tens of processes, 40-60 ms of /proc reading that made every 8th
	// job that much slower). Its next jobs may start before the verdict.
	MeasureAsync bool

	measuring atomic.Bool // a MeasureAsync measure runs

	mu     sync.Mutex
	cur    P
	has    bool        // cur is set
	idle   *time.Timer // the idle check
	closed bool
}

// Acquire returns the current process, starting one if there is none or
// the last one died. It counts the caller as a use; release undoes that.
func (s *Supervisor[P]) Acquire() (P, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has {
		if !s.cur.Exited() {
			s.cur.State().inflight++
			return s.cur, nil
		}
		// Stopped before its successor starts (an office worker's next
		// process reuses its directory), unless jobs still use it.
		dead := s.cur
		if s.retireLocked(dead, "crash", fmt.Errorf("%s exited", s.Name)) && dead.State().inflight == 0 {
			s.stopOnce(dead)
		}
	}
	var zero P
	if s.closed {
		return zero, report.Errorf(report.Unavailable, "conversion engines are shutting down")
	}
	p, err := s.Launch()
	if err != nil {
		return zero, err
	}
	s.cur, s.has = p, true
	p.State().inflight++
	return p, nil
}

// Warm starts a process ahead of the first job, if none runs.
func (s *Supervisor[P]) Warm() error {
	p, err := s.Acquire()
	if err == nil {
		s.Release(p, false, false)
	}
	return err
}

// Running reports whether a process is up and not retired.
func (s *Supervisor[P]) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has && !s.cur.State().retired
}

// Current returns the process new uses get, if any.
func (s *Supervisor[P]) Current() (P, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.has
}

// Hold counts one more use of p, unless p is retired or usable says no.
func (s *Supervisor[P]) Hold(p P, usable func() bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := p.State()
	if st.retired || !usable() {
		return false
	}
	st.inflight++
	return true
}

// Release ends a use of p (job: a job ran on it, large: a large one) and
// retires p when the policy says so.
func (s *Supervisor[P]) Release(p P, job, large bool) {
	st := p.State()
	s.mu.Lock()
	st.inflight--
	reason, measure := "", false
	if job {
		st.jobs++
		if !st.retired {
			reason, measure = s.Policy.afterJob(st.jobs, large)
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
	if measure && s.MeasureAsync {
		// One measure at a time: a run of large jobs would otherwise
		// stack /proc walks beside the prints.
		if s.measuring.CompareAndSwap(false, true) {
			go func() {
				defer s.measuring.Store(false)
				s.retireIfOver(p)
			}()
		}
		return
	}
	if measure && s.OverMem(p.RootPID(), s.Policy.MaxRSS) {
		reason = "memory"
	}
	if reason != "" && s.Retire(p, reason, nil) && s.Replaced != nil {
		go s.Replaced()
	}
}

// retireIfOver retires p if it is over the memory bound, and starts its
// successor.
func (s *Supervisor[P]) retireIfOver(p P) {
	if s.OverMem(p.RootPID(), s.Policy.MaxRSS) && s.Retire(p, "memory", nil) && s.Replaced != nil {
		s.Replaced()
	}
}

// Retire stops handing out p, counting a restart for reason; p stops once
// its last use ends. It reports false when p was retired already.
func (s *Supervisor[P]) Retire(p P, reason string, err error) bool {
	s.mu.Lock()
	ok := s.retireLocked(p, reason, err)
	stop := ok && p.State().inflight == 0
	s.mu.Unlock()
	if stop {
		s.stopOnce(p)
	}
	return ok
}

// RetireCurrent retires the current process, if any (engines that run one
// job at a time know no other).
func (s *Supervisor[P]) RetireCurrent(reason string, err error) {
	if p, ok := s.Current(); ok {
		s.Retire(p, reason, err)
	}
}

// retireLocked retires p and reports whether it was not retired before;
// the caller stops p if no use remains.
func (s *Supervisor[P]) retireLocked(p P, reason string, err error) bool {
	st := p.State()
	if st.retired {
		return false
	}
	s.Restarts.Add(1)
	s.Met.Restarted(s.Engine, reason)
	if err != nil {
		s.Log.Warn(s.Name+" replaced", "reason", reason, "jobs", st.jobs, "err", err)
	} else {
		s.Log.Info(s.Name+" replaced", "reason", reason, "jobs", st.jobs)
	}
	if s.has && s.cur.State() == st {
		var zero P
		s.cur, s.has = zero, false
	}
	st.retired = true
	return true
}

func (s *Supervisor[P]) stopOnce(p P) {
	p.State().stopOnce.Do(func() { s.Stop(p) })
}

// Close stops the current process at once, in use or not, counting no
// restart; nothing starts after it.
func (s *Supervisor[P]) Close() {
	s.mu.Lock()
	s.closed = true
	if s.idle != nil {
		s.idle.Stop()
	}
	p, had := s.cur, s.has
	if had {
		var zero P
		s.cur, s.has = zero, false
		p.State().retired = true
	}
	s.mu.Unlock()
	if had {
		s.stopOnce(p)
	}
}

// Watch caps p's memory while a job runs on it, until end is called; mark
// is for stoppedSince after the job.
func (s *Supervisor[P]) Watch(p P) (mark int64, end func()) {
	if s.MemCap == nil {
		return 0, func() {}
	}
	return s.MemCap.begin(p.RootPID())
}

// StoppedSince reports whether the cap during jobs stopped a process since
// mark, and the memory it had then.
func (s *Supervisor[P]) StoppedSince(mark int64) (bool, int64) {
	if s.MemCap == nil {
		return false, 0
	}
	return s.MemCap.stoppedSince(mark)
}

// armIdleLocked (re)starts the idle check's timer; s.mu is held.
func (s *Supervisor[P]) armIdleLocked() {
	if s.Policy.MaxRSS <= 0 || s.Policy.IdleAfter <= 0 || s.closed {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(s.Policy.IdleAfter, s.idleCheck)
		return
	}
	s.idle.Reset(s.Policy.IdleAfter)
}

// idleCheck replaces the process when it is idle and over the memory bound.
// One still in use is left alone and checked again later: a job's release
// re-arms the timer, but a use that is not a job (a spare page being made)
// re-arms nothing, so the check re-arms itself.
func (s *Supervisor[P]) idleCheck() {
	s.mu.Lock()
	if s.closed || !s.has {
		s.mu.Unlock()
		return
	}
	p := s.cur
	busy := p.State().inflight > 0
	if busy {
		s.armIdleLocked()
	}
	s.mu.Unlock()
	if busy || !s.OverMem(p.RootPID(), s.Policy.MaxRSS) {
		return
	}
	if s.Retire(p, "memory", nil) && s.Replaced != nil {
		s.Replaced()
	}
}
