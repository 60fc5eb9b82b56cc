package watch

import (
	"context"
	"time"
)

// The outage handling of a run, around its circuit (circuit.go): the first
// upload that finds the server unreachable opens it (server_down); from
// then on finished files are queued, not sent, and a health probe decides
// when the server is back (server_up), at which point everything queued
// goes out at once.

func (r *runner) goDown(err error) {
	if r.circuit.fail(err) {
		r.log.emit(Event{Event: evServerDown, Error: err.Error(), Message: "files are queued until it is back"})
	}
}

// maxProbeInterval caps the health probe's backoff lower than file
// retries: a ping is tiny, and the probe alone decides how soon queued
// files go out after the server is back.
const maxProbeInterval = 15 * time.Second

// probeIfDue pings the server in the background when the circuit says a
// probe is due; the outcome arrives on probeRes.
func (r *runner) probeIfDue(ctx context.Context, probeRes chan<- error) {
	if !r.circuit.startProbe() {
		return
	}
	go func() {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := r.pub.svc.Ping(pctx)
		probeRes <- err
	}()
}

func (r *runner) probed(err error, ctx context.Context) {
	r.circuit.probed(err)
	if err != nil {
		return
	}
	now := r.now()
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
