package convert

import (
	"sync/atomic"

	"github.com/reportd/reportd/internal/report"
)

// gate bounds the jobs an engine holds: running plus waiting never exceeds
// limit (workers + queue size). A job over the limit is refused at once with
// report.Unavailable, so a burst cannot pile up goroutines and memory.
type gate struct {
	limit  int64
	n      atomic.Int64
	onSize func(int64) // queue-depth gauge; may be nil
}

func newGate(workers, queue int, onSize func(int64)) *gate {
	return &gate{limit: int64(workers + queue), onSize: onSize}
}

func (g *gate) enter() error {
	if n := g.n.Add(1); n > g.limit {
		g.n.Add(-1)
		return report.Errorf(report.Unavailable, "conversion queue full")
	} else if g.onSize != nil {
		g.onSize(n)
	}
	return nil
}

func (g *gate) leave() {
	n := g.n.Add(-1)
	if g.onSize != nil {
		g.onSize(n)
	}
}
