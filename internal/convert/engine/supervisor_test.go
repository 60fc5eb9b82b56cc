package engine

import (
	"io"
	"log/slog"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// The supervisor's recycle policy, driven with a tiny real child process
// (sh) in place of Chromium or LibreOffice: real start, real death, real
// memory readings from /proc.

// testProc is a child started by a test supervisor.
type testProc struct {
	ProcState
	cmd     *exec.Cmd
	done    chan struct{} // closed once it has exited and been waited for
	stopped atomic.Bool   // the supervisor stopped it
}

func (p *testProc) RootPID() int { return p.cmd.Process.Pid }

func (p *testProc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// testSupervisor is a supervisor of sh children running script, with its
// metrics on a registry of its own.
type testSupervisor struct {
	*Supervisor[*testProc]
	reg      *prometheus.Registry
	count    atomic.Int64 // restarts
	replaced chan struct{}
}

func newTestSupervisor(t *testing.T, policy RecyclePolicy, script string) *testSupervisor {
	t.Helper()
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testSupervisor{reg: reg, replaced: make(chan struct{}, 16)}
	ts.Supervisor = &Supervisor[*testProc]{
		Name:   "test engine",
		Engine: "test",
		Policy: policy,
		Launch: func() (*testProc, error) {
			cmd := exec.Command("sh", "-c", script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			p := &testProc{cmd: cmd, done: make(chan struct{})}
			go func() { cmd.Wait(); close(p.done) }()
			return p, nil
		},
		Stop: func(p *testProc) {
			p.stopped.Store(true)
			KillGroup(p.cmd.Process.Pid)
			<-p.done
		},
		Replaced: func() { ts.replaced <- struct{}{} },
		Log:      quietLog,
		Met:      met,
		Restarts: &ts.count,
		OverMem:  OverMemory,
	}
	t.Cleanup(ts.Close)
	return ts
}

// restarted is the restart metric for reason.
func (ts *testSupervisor) Restarted(reason string) float64 {
	return testutil.ToFloat64(ts.Met.restarts.WithLabelValues("test", reason))
}

// job runs one job (large or not) on the current process and returns it.
func (ts *testSupervisor) job(t *testing.T, large bool) *testProc {
	t.Helper()
	p, err := ts.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	ts.Release(p, true, large)
	return p
}

// eventually polls cond with a generous bound (a loaded machine).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute", what)
		}
	}
}

const idleChild = "sleep 600"

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestRecyclePolicy(t *testing.T) {
	p := RecyclePolicy{MaxJobs: 10, MaxRSS: 1 << 20, MeasureEvery: 4}
	for _, c := range []struct {
		jobs    int
		large   bool
		reason  string
		measure bool
	}{
		{jobs: 1, measure: false},
		{jobs: 1, large: true, measure: true},
		{jobs: 4, measure: true},
		{jobs: 9, measure: false},
		{jobs: 10, reason: "jobs"},
		{jobs: 10, large: true, reason: "jobs"},
		{jobs: 11, reason: "jobs"},
	} {
		reason, measure := p.afterJob(c.jobs, c.large)
		if reason != c.reason || measure != c.measure {
			t.Errorf("afterJob(%d, %v) = %q, %v; want %q, %v", c.jobs, c.large, reason, measure, c.reason, c.measure)
		}
		q := p
		q.MaxRSS = 0
		if _, measure := q.afterJob(c.jobs, c.large); measure {
			t.Errorf("without a memory bound, afterJob(%d, %v) measures", c.jobs, c.large)
		}
	}
	every := RecyclePolicy{MaxJobs: 10, MaxRSS: 1, MeasureEvery: 1}
	for jobs := 1; jobs < 10; jobs++ {
		if _, measure := every.afterJob(jobs, false); !measure {
			t.Errorf("MeasureEvery 1: job %d is not measured", jobs)
		}
	}
}

// After MaxJobs jobs the process is replaced: counted, stopped, and a
// successor asked for; the next job runs on a fresh process.
func TestSupervisorRecyclesAfterMaxJobs(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 3}, idleChild)
	first := ts.job(t, false)
	if ts.job(t, false) != first {
		t.Fatal("the second job ran on another process")
	}
	if ts.count.Load() != 0 || first.stopped.Load() {
		t.Fatalf("replaced before its job cap: restarts %d", ts.count.Load())
	}
	ts.job(t, false)
	if n := ts.count.Load(); n != 1 || ts.Restarted("jobs") != 1 {
		t.Fatalf("restarts = %d, metric{reason=jobs} = %v; want 1, 1", n, ts.Restarted("jobs"))
	}
	if !first.stopped.Load() || !first.Exited() {
		t.Fatal("the retired process was not stopped")
	}
	select {
	case <-ts.replaced:
	case <-time.After(time.Minute):
		t.Fatal("no successor was asked for")
	}
	if next := ts.job(t, false); next == first || next.RootPID() == first.RootPID() {
		t.Fatal("the job after the cap ran on the retired process")
	}
}

// Over the memory bound after a job: measured every MeasureEvery-th job
// and after every large one; under it, never replaced.
func TestSupervisorMemoryAfterJobs(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100, MaxRSS: 1, MeasureEvery: 3}, idleChild) // any process is over 1 byte
	// A child caught in the middle of sh's exec of sleep has no memory to
	// read yet: let it settle before the jobs (the policy is under test,
	// not that instant).
	settle := func() {
		p, err := ts.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the child's memory can be read", func() bool { return treeMem(p.RootPID(), false) > 0 })
		ts.Release(p, false, false)
	}
	settle()
	first := ts.job(t, false)
	ts.job(t, false)
	if ts.count.Load() != 0 {
		t.Fatal("measured before the 3rd job")
	}
	ts.job(t, false)
	if ts.count.Load() != 1 || ts.Restarted("memory") != 1 || !first.stopped.Load() {
		t.Fatalf("3rd job over the bound: restarts %d, metric{reason=memory} %v", ts.count.Load(), ts.Restarted("memory"))
	}
	settle() // the successor, too
	second := ts.job(t, true)
	if second == first || ts.count.Load() != 2 || !second.stopped.Load() {
		t.Fatalf("a large job over the bound was not measured at once: restarts %d", ts.count.Load())
	}

	roomy := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100, MaxRSS: 1 << 40, MeasureEvery: 1}, idleChild)
	p := roomy.job(t, true)
	for range 5 {
		roomy.job(t, true)
	}
	if roomy.count.Load() != 0 || p.stopped.Load() {
		t.Fatal("a process under the bound was replaced")
	}
}

// An idle process over the bound is replaced without waiting for a job;
// one in use is left alone until its use ends.
func TestSupervisorIdleCheck(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100, MaxRSS: 1, MeasureEvery: 1000, IdleAfter: 20 * time.Millisecond}, idleChild)
	p, err := ts.Acquire() // held: busy
	if err != nil {
		t.Fatal(err)
	}
	q, _ := ts.Acquire()
	ts.Release(q, true, false) // a job ended: arms the idle check while p is still held
	time.Sleep(200 * time.Millisecond)
	if ts.count.Load() != 0 || p.stopped.Load() {
		t.Fatal("the idle check replaced a process in use")
	}
	ts.Release(p, false, false)
	eventually(t, "the idle process over the bound replaced", func() bool { return p.stopped.Load() })
	if ts.count.Load() != 1 || ts.Restarted("memory") != 1 {
		t.Fatalf("restarts %d, metric{reason=memory} %v; want 1, 1", ts.count.Load(), ts.Restarted("memory"))
	}
}

// A process that died on its own is replaced at the next use, counted as a
// crash.
func TestSupervisorReplacesDeadProcess(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100}, idleChild)
	first := ts.job(t, false)
	KillGroup(first.RootPID())
	eventually(t, "the child exited", first.Exited)
	next := ts.job(t, false)
	if next == first || ts.count.Load() != 1 || ts.Restarted("crash") != 1 {
		t.Fatalf("dead process: new one %v, restarts %d, metric{reason=crash} %v", next != first, ts.count.Load(), ts.Restarted("crash"))
	}
}

// A retired process takes no new use and stops when its last use ends.
func TestSupervisorRetiredStopsAfterLastUse(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100}, idleChild)
	a, _ := ts.Acquire()
	b, err := ts.Acquire()
	if err != nil || a != b {
		t.Fatalf("two uses got two processes (%v)", err)
	}
	if !ts.Retire(a, "hang", nil) || ts.Retire(a, "hang", nil) {
		t.Fatal("retire reports wrongly whether it retired")
	}
	if ts.Hold(a, func() bool { return true }) {
		t.Fatal("a retired process took a new use")
	}
	ts.Release(a, true, false)
	if a.stopped.Load() {
		t.Fatal("stopped while a use remains")
	}
	ts.Release(b, true, false)
	if !a.stopped.Load() {
		t.Fatal("not stopped after its last use")
	}
	if c := ts.job(t, false); c == a || ts.count.Load() != 1 {
		t.Fatalf("after retirement: restarts %d", ts.count.Load())
	}
}

// close stops the process in use, counts no restart, and refuses new uses.
func TestSupervisorClose(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100}, idleChild)
	p, err := ts.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	ts.Close()
	if !p.stopped.Load() || ts.count.Load() != 0 {
		t.Fatalf("close: stopped %v, restarts %d", p.stopped.Load(), ts.count.Load())
	}
	ts.Release(p, true, false)
	if _, err := ts.Acquire(); err == nil {
		t.Fatal("a process started after close")
	} else {
		testfixture.WantKind(t, err, report.Unavailable)
	}
}

// During a job, the memory cap stops a "renderer" (a descendant whose
// command line says --type=renderer) over the bound; the process itself
// lives on.
func TestSupervisorWatchStopsRendererDuringJob(t *testing.T) {
	// exec: the root must not be a shell waiting for the renderer, or it
	// would end when the renderer is stopped.
	script := `sh -c 'sleep 600; : --type=renderer' & exec sleep 600`
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100}, script)
	ts.MemCap = NewRendererSampler(1, ts.Log)
	p, err := ts.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the renderer started", func() bool { return len(renderers(p.RootPID(), procChildren())) > 0 })
	mark, end := ts.Watch(p)
	eventually(t, "the renderer over the bound stopped", func() bool { stopped, _ := ts.StoppedSince(mark); return stopped })
	end()
	if _, rss := ts.StoppedSince(mark); rss <= 0 {
		t.Errorf("the stop reports %d bytes", rss)
	}
	if p.Exited() || ts.count.Load() != 0 {
		t.Fatal("the process itself was stopped or replaced")
	}
	ts.Release(p, true, false)
}

// With MeasureAsync, the measure after a job does not hold up Release (a
// slow measure here) and still retires a process over the bound.
func TestSupervisorMeasureAsync(t *testing.T) {
	ts := newTestSupervisor(t, RecyclePolicy{MaxJobs: 100, MaxRSS: 1, MeasureEvery: 1}, idleChild)
	measuring := make(chan struct{})
	ts.OverMem = func(int, int64) bool { <-measuring; return true }
	ts.MeasureAsync = true
	first := ts.job(t, false) // returns while the measure waits
	if ts.count.Load() != 0 || first.stopped.Load() {
		t.Fatal("retired before the measure ended")
	}
	close(measuring)
	eventually(t, "the process over the bound is retired", func() bool {
		return ts.count.Load() == 1 && ts.Restarted("memory") == 1 && first.stopped.Load()
	})
}
