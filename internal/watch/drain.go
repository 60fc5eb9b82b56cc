package watch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/exitcode"
)

// stop lets in-flight uploads finish (for at most --drain-timeout), records
// their outcome and the queue, and returns the run's error.
func (r *runner) stop(ctx context.Context, jobs chan job, results chan result, workers *sync.WaitGroup, cancelUploads context.CancelFunc, persisted chan struct{}) error {
	if !r.opts.once || ctx.Err() != nil {
		r.log.emit(Event{Event: evStopping, Count: len(r.inflight) - len(r.readyQ)})
	}
	close(jobs)
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	drain := time.NewTimer(r.opts.drainTimeout)
	defer drain.Stop()
wait:
	for {
		select {
		case res := <-results:
			r.result(res)
		case <-drain.C:
			cancelUploads()
		case <-done:
			break wait
		}
	}
	r.bg.Wait()
	close(r.seenCh)
	<-persisted
	if r.dirs.fsw != nil {
		_ = r.dirs.fsw.Close()
	}
	if !r.opts.once || ctx.Err() != nil {
		r.log.emit(Event{Event: evStopped})
	}
	if r.authErr != nil {
		return r.authStopped()
	}
	if !r.opts.once {
		return nil
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case r.circuit.down():
		return exitcode.With(exitcode.Unreachable, fmt.Errorf("server unreachable, files stay queued for the next run: %w", r.circuit.lastErr))
	case r.failures > 0:
		return exitcode.With(exitcode.Failed, fmt.Errorf("%d file(s) could not be published", r.failures))
	case r.found == 0 && !r.opts.allowEmpty:
		return exitcode.With(exitcode.NoMatch, errors.New("no report files found (--allow-empty makes this a success)"))
	}
	return nil
}
