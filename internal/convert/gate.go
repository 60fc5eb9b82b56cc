package convert

import (
	"context"
	"sync"

	"github.com/reportd/reportd/internal/report"
)

// gate is an engine's fair queue. At most slots jobs run at once (one per
// tab or worker) and at most queue jobs wait; a job beyond that is refused
// at once with report.Unavailable, so a burst cannot pile up goroutines and
// memory. Waiting jobs are grouped by project and a freed slot goes to the
// projects in turn (round robin), oldest job first within a project: one
// project's backlog of slow or hanging reports delays another project's
// report by at most one job per slot, never by the whole backlog.
type gate struct {
	slots, queue int
	onSize       func(int64) // queue-depth gauge (running + waiting); may be nil

	mu      sync.Mutex
	running int
	waiting int
	byProj  map[int64][]*waiter
	turn    []int64 // projects with waiting jobs, next to be served first
}

type waiter struct {
	ready   chan struct{}
	granted bool // under gate.mu
}

func newGate(slots, queue int, onSize func(int64)) *gate {
	return &gate{slots: slots, queue: queue, onSize: onSize, byProj: map[int64][]*waiter{}}
}

// enter waits for a slot for a job of project and returns the function
// that gives it back.
func (g *gate) enter(ctx context.Context, project int64) (leave func(), err error) {
	g.mu.Lock()
	if g.running < g.slots && g.waiting == 0 {
		g.running++
		g.sizeLocked()
		g.mu.Unlock()
		return g.once(), nil
	}
	if g.waiting >= g.queue {
		g.mu.Unlock()
		return nil, report.Errorf(report.Unavailable, "conversion queue full")
	}
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
		return g.once(), nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.granted {
			g.releaseLocked() // granted as we gave up: pass it on
		} else {
			g.removeLocked(project, w)
		}
		return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
}

func (g *gate) once() func() {
	var o sync.Once
	return func() {
		o.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.releaseLocked()
		})
	}
}

// releaseLocked frees a slot and hands it to the project whose turn it is.
func (g *gate) releaseLocked() {
	g.running--
	for g.running < g.slots && len(g.turn) > 0 {
		p := g.turn[0]
		q := g.byProj[p]
		w := q[0]
		g.byProj[p] = q[1:]
		g.turn = g.turn[1:]
		if len(g.byProj[p]) > 0 {
			g.turn = append(g.turn, p) // to the back of the line
		} else {
			delete(g.byProj, p)
		}
		g.waiting--
		g.running++
		w.granted = true
		close(w.ready)
	}
	g.sizeLocked()
}

func (g *gate) removeLocked(project int64, w *waiter) {
	q := g.byProj[project]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	g.waiting--
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

func (g *gate) sizeLocked() {
	if g.onSize != nil {
		g.onSize(int64(g.running + g.waiting))
	}
}
