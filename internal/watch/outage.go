package watch

import (
	"context"
	"time"
)

// The outage circuit: the first upload that finds the server unreachable
// opens it (server_down); from then on finished files are queued, not sent,
// and a health probe decides when the server is back (server_up), at which
// point everything queued goes out at once.

func (r *runner) goDown(err error, now time.Time) {
	r.lastDown = err
	if r.down {
		return
	}
	r.down, r.probeN = true, 0
	r.outages++
	r.probeAt = now.Add(backoff(r.opts.retryMin, r.probeMax(), r.outages))
	r.log.emit(Event{Event: evServerDown, Error: err.Error(), Message: "files are queued until it is back"})
}

// probeMax caps the health probe's backoff lower than file retries: a ping
// is tiny, and the probe alone decides how soon queued files go out after
// the server is back.
func (r *runner) probeMax() time.Duration { return min(r.opts.retryMax, maxProbeInterval) }

const maxProbeInterval = 15 * time.Second

func (r *runner) probed(err error, ctx context.Context) {
	r.probing = false
	now := r.now()
	if err != nil {
		r.lastDown = err
		r.probeN++
		r.probeAt = now.Add(backoff(r.opts.retryMin, r.probeMax(), r.outages+r.probeN))
		return
	}
	r.down = false
	n := 0
	for path, w := range r.retries {
		if w.fail == unreachable {
			w.due = now
			r.retries[path] = w
			n++
		}
	}
	r.log.emit(Event{Event: evServerUp, Count: n})
	if len(r.store.owedDeletes()) > 0 {
		r.bg.Go(func() { r.pub.payDeletes(ctx) })
	}
}
