package engine

import (
	"context"
	"sync"

	"github.com/reportd/reportd/internal/report"
)

// Gate is an engine's fair queue. At most slots jobs run at once (one per
// tab or worker) and at most queue jobs wait; a job beyond that is refused
// at once with report.Unavailable, so a burst cannot pile up goroutines and
// memory. Waiting jobs are grouped by project, and a freed slot goes to the
// waiting project served least recently (a project never served, or with
// nothing left running or waiting, first; ties in order of arrival), oldest
// job first within a project. So projects take turns, and one project's
// backlog of slow or hanging reports delays another project's report by at
// most the jobs already running, never by the whole backlog.
type Gate struct {
	slots, queue int
	onSize       func(int64) // queue-depth gauge (running + waiting); may be nil

	mu      sync.Mutex
	running int
	waiting int
	seq     uint64                // grants so far
	byProj  map[int64][]*waiter   // waiting jobs
	turn    []int64               // projects with waiting jobs, in order of arrival
	active  map[int64]*projectUse // projects with running or waiting jobs
}

type projectUse struct {
	running, waiting int
	served           uint64 // seq of the project's last grant
}

type waiter struct {
	ready   chan struct{}
	granted bool // under gate.mu
}

// NewGate returns a gate of slots running and queue waiting jobs; onSize
// (may be nil) gets the queue depth on every change.
func NewGate(slots, queue int, onSize func(int64)) *Gate {
	return &Gate{slots: slots, queue: queue, onSize: onSize,
		byProj: map[int64][]*waiter{}, active: map[int64]*projectUse{}}
}

// Enter waits for a slot for a job of project and returns the function
// that gives it back.
func (g *Gate) Enter(ctx context.Context, project int64) (leave func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, report.Wrap(report.Unavailable, err, "conversion cancelled")
	}
	g.mu.Lock()
	if g.running < g.slots && g.waiting == 0 {
		g.grantLocked(project)
		g.sizeLocked()
		g.mu.Unlock()
		return g.once(project), nil
	}
	if g.waiting >= g.queue {
		g.mu.Unlock()
		return nil, report.Errorf(report.Unavailable, "conversion queue full")
	}
	g.use(project).waiting++
	w := &waiter{ready: make(chan struct{})}
	if len(g.byProj[project]) == 0 {
		g.turn = append(g.turn, project)
	}
	g.byProj[project] = append(g.byProj[project], w)
	g.waiting++
	g.sizeLocked()
	g.mu.Unlock()

	select {
	case <-w.ready:
		return g.once(project), nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.granted {
			g.releaseLocked(project) // granted as we gave up: pass it on
		} else {
			g.removeLocked(project, w)
		}
		return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
}

// Waiting is the number of jobs waiting for a slot.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

func (g *Gate) use(project int64) *projectUse {
	u := g.active[project]
	if u == nil {
		u = &projectUse{}
		g.active[project] = u
	}
	return u
}

func (g *Gate) grantLocked(project int64) {
	g.seq++
	g.running++
	u := g.use(project)
	u.running++
	u.served = g.seq
}

func (g *Gate) idleLocked(project int64) {
	if u := g.active[project]; u != nil && u.running == 0 && u.waiting == 0 {
		delete(g.active, project)
	}
}

func (g *Gate) once(project int64) func() {
	var o sync.Once
	return func() {
		o.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.releaseLocked(project)
		})
	}
}

// releaseLocked frees project's slot and hands free slots to the waiting
// projects served least recently.
func (g *Gate) releaseLocked(project int64) {
	g.running--
	g.active[project].running--
	g.idleLocked(project)
	for g.running < g.slots && len(g.turn) > 0 {
		i := 0
		for j, p := range g.turn {
			if g.active[p].served < g.active[g.turn[i]].served {
				i = j
			}
		}
		p := g.turn[i]
		q := g.byProj[p]
		w := q[0]
		if len(q) > 1 {
			g.byProj[p] = q[1:]
		} else {
			delete(g.byProj, p)
			g.turn = append(g.turn[:i:i], g.turn[i+1:]...)
		}
		g.waiting--
		g.active[p].waiting--
		g.grantLocked(p)
		w.granted = true
		close(w.ready)
	}
	g.sizeLocked()
}

func (g *Gate) removeLocked(project int64, w *waiter) {
	q := g.byProj[project]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	g.waiting--
	g.active[project].waiting--
	g.idleLocked(project)
	if len(q) > 0 {
		g.byProj[project] = q
	} else {
		delete(g.byProj, project)
		for i, p := range g.turn {
			if p == project {
				g.turn = append(g.turn[:i:i], g.turn[i+1:]...)
				break
			}
		}
	}
	g.sizeLocked()
}

func (g *Gate) sizeLocked() {
	if g.onSize != nil {
		g.onSize(int64(g.running + g.waiting))
	}
}
