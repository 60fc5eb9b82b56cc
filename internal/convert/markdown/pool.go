package markdown

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// goldmark has inputs that take quadratic time (`[a](` repeated 100,000
// times, 400 KB, renders for ~40 s) and no way to stop a render half way.
// So Markdown is rendered in warm child processes, the running binary
// started again as ChildName (child.go), and a child
// still rendering at the job's deadline is killed: the CPU work really
// stops, the engine's slot is free again, and the next job gets a fresh
// child. Starting a child costs ~150 ms (the binary's package
// initialisation), paid off the job's path once per child; a job pays only
// the pipe round trip.

// Pool is a pool of warm renderer children: size slots, each a
// supervisor (engine/supervisor.go) running at most one child, replaced after
// MaxJobsPerWorker documents, when found dead, or when killed under a job.
// A render takes a free slot; one that finds none (more renders at once than
// slots) runs on a child of its own, killed after it.
type Pool struct {
	slots    chan *engine.Supervisor[*mdChild] // the free ones
	all      []*engine.Supervisor[*mdChild]
	restarts atomic.Int64

	mu     sync.Mutex
	closed bool
}

type mdChild struct {
	engine.ProcState
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out      *bufio.Reader
	done     <-chan struct{} // closed once the child is waited for (startLocked)
	killOnce sync.Once
}

func (c *mdChild) RootPID() int { return c.cmd.Process.Pid }

func (c *mdChild) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func NewPool(size, maxJobs int, log *slog.Logger, met *engine.Metrics) *Pool {
	p := &Pool{slots: make(chan *engine.Supervisor[*mdChild], size)}
	for range size {
		s := &engine.Supervisor[*mdChild]{
			Name:     "Markdown renderer",
			Engine:   "markdown",
			Policy:   engine.RecyclePolicy{MaxJobs: maxJobs},
			Launch:   startMDChild,
			Stop:     (*mdChild).kill,
			Log:      log,
			Met:      met,
			Restarts: &p.restarts,
			OverMem:  engine.OverMemory,
		}
		p.all = append(p.all, s)
		p.slots <- s
	}
	return p
}

func startMDChild() (*mdChild, error) {
	cmd := engine.ChildCommand(ChildName)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// From a thread that stays while the child lives: Pdeathsig fires when
	// the thread that forked the child exits, which the Go runtime may do
	// at any time to an unlocked one (a warm child died so, "the Markdown
	// renderer failed: EOF").
	done, err := engine.StartLocked(cmd)
	if err != nil {
		return nil, err
	}
	return &mdChild{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), done: done}, nil
}

// kill ends the child and waits for it; later calls do nothing.
func (c *mdChild) kill() {
	c.killOnce.Do(func() {
		engine.KillGroup(c.cmd.Process.Pid)
		c.stdin.Close()
		<-c.done
	})
}

func (c *mdChild) render(src []byte) ([]byte, error) {
	return Exchange(c.stdin, c.out, src)
}

// takeSlot returns a free slot, or nil when all are busy or closed.
func (p *Pool) takeSlot() *engine.Supervisor[*mdChild] {
	select {
	case s := <-p.slots:
		return s
	default:
		return nil
	}
}

// putSlot frees s; after Close, its child is stopped instead.
func (p *Pool) putSlot(s *engine.Supervisor[*mdChild]) {
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.slots <- s // never blocks: one place per slot
	}
	p.mu.Unlock()
	if closed {
		s.Close()
	}
}

// Warm starts one child ahead of the first job.
func (p *Pool) Warm() {
	if s := p.takeSlot(); s != nil {
		s.Warm()
		p.putSlot(s)
	}
}

// warmChildren lists the children the slots hold, for tests.
func (p *Pool) warmChildren() []*mdChild {
	var out []*mdChild
	for _, s := range p.all {
		if c, ok := s.Current(); ok {
			out = append(out, c)
		}
	}
	return out
}

// PIDs lists the warm children the slots hold, for tests that check they end.
func (p *Pool) PIDs() []int {
	var pids []int
	for _, c := range p.warmChildren() {
		pids = append(pids, c.cmd.Process.Pid)
	}
	return pids
}

// Close kills the idle children; busy ones die with their job's context
// and are stopped when their slot comes back.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		s := p.takeSlot()
		if s == nil {
			return
		}
		s.Close()
	}
}

// Render turns src into an HTML document in a child, which is killed if
// ctx ends or timeout passes first. Errors are *report.Error. A warm child
// that turns out to be dead (its pipe broken before it answered: killed
// while idle, by the OOM killer say) is the renderer's fault, not the
// document's: the job runs once more on a fresh child.
func (p *Pool) Render(ctx context.Context, src []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	slot := p.takeSlot()
	if slot != nil {
		defer p.putSlot(slot)
	}
	for attempt := 0; ; attempt++ {
		var c *mdChild
		var err error
		warm := false
		if slot != nil {
			warm = slot.Running()
			c, err = slot.Acquire()
		} else {
			c, err = startMDChild()
		}
		if err != nil {
			return nil, report.Wrap(report.Conversion, err, "cannot start the Markdown renderer")
		}
		html, err, killed := p.renderOn(ctx, c, src, timeout)
		retry := killed == "crash" && ctx.Err() == nil
		if slot == nil {
			c.kill()
		} else {
			if killed != "" {
				slot.Retire(c, killed, nil)
			}
			slot.Release(c, killed == "", false)
		}
		if !retry || !warm || attempt > 0 {
			return html, err
		}
	}
}

// renderOn runs one attempt on child c; killed is why c was killed under
// it ("crash": broken before the document could have mattered, "timeout",
// "cancelled"), "" when c is still good.
func (p *Pool) renderOn(ctx context.Context, c *mdChild, src []byte, timeout time.Duration) (html []byte, err error, killed string) {
	type result struct {
		html []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		html, err := c.render(src)
		done <- result{html, err}
	}()
	select {
	case r := <-done:
		var re *RenderError
		switch {
		case r.err == nil:
			return r.html, nil, ""
		case errors.As(r.err, &re):
			return nil, report.Wrap(report.Conversion, r.err, "cannot render the Markdown"), ""
		default:
			c.kill()
			return nil, report.Wrap(report.Conversion, r.err, "the Markdown renderer failed"), "crash"
		}
	case <-ctx.Done():
		c.kill() // ends the render; the goroutine above sees EOF
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, engine.TimedOut(ctx.Err(), "the Markdown", int64(len(src)), timeout), "timeout"
		}
		return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled"), "cancelled"
	}
}
