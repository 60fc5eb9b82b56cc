package watch

import (
	"context"
	"os"
	"time"
)

// tick moves finished files to the workers, releases due retries and
// probes the server while it is down.
func (r *runner) tick(ctx context.Context, probeRes chan<- error) {
	now := r.now()
	for _, rd := range r.tracker.due(now) {
		if r.inflight[rd.path] {
			r.dirty[rd.path] = true
			continue
		}
		if r.circuit.down() {
			r.retries[rd.path] = retryWait{fail: unreachable}
			r.log.emit(Event{Event: evQueued, Path: rd.path})
			continue
		}
		// In flight from here on, so that neither an event nor a rescan
		// can queue a second job for it while it waits for a worker.
		r.inflight[rd.path] = true
		r.readyQ = append(r.readyQ, job{rd})
	}
	for path, at := range r.dirs.recheck {
		if now.Before(at) {
			continue
		}
		delete(r.dirs.recheck, path)
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			r.addTree(r.opts.rootOf(path), path, offerFiles)
		}
	}
	for path, w := range r.retries {
		if (w.fail == unreachable && r.circuit.down()) || now.Before(w.due) {
			continue
		}
		delete(r.retries, path)
		fi, err := r.opts.unitStat(path)
		if err != nil {
			_ = r.store.dequeue(path)
			continue
		}
		// Back through the tracker: ready at once if it has not changed
		// since it was last judged finished, else it settles again.
		r.tracker.addSince(path, fi, now.Add(-r.opts.settle), now)
	}
	r.probeIfDue(ctx, probeRes)
}

func (r *runner) result(res result) {
	now := r.now()
	delete(r.inflight, res.path)
	switch res.kind {
	case resDone, resGaveUp:
		if res.stat != (stat{}) {
			r.known[res.path] = res.stat
		}
		if res.published {
			r.circuit.published()
		}
		if res.kind == resGaveUp {
			r.failures++
		}
	case resUnstable:
		if res.published && res.stat != (stat{}) {
			r.known[res.path] = res.stat
		}
		r.tracker.touch(res.path, now)
	case resRetry:
		if res.fail == unauthorized {
			r.refused(res)
			break
		}
		if res.fail == unreachable {
			r.goDown(res.err)
			r.retries[res.path] = retryWait{fail: unreachable}
			r.log.emit(Event{Event: evQueued, Path: res.path, Error: res.err.Error()})
			break
		}
		d := backoff(r.opts.retryMin, r.opts.retryMax, res.attempt)
		r.retries[res.path] = retryWait{due: now.Add(d), fail: res.fail}
		r.log.emit(Event{Event: evRetry, Path: res.path, Attempt: res.attempt, RetryIn: d.Round(time.Millisecond).String(), Error: res.err.Error()})
	}
	if r.dirty[res.path] {
		delete(r.dirty, res.path)
		delete(r.retries, res.path)
		r.tracker.touch(res.path, now)
	}
}
