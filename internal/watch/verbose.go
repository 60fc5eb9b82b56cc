package watch

import "fmt"

// skip tells, with -v, why a file is not published. Each path is explained
// once per reason, not once per write event.
func (r *runner) skip(path, why string) {
	if !r.opts.verbose || r.skipped[path] == why {
		return
	}
	if len(r.skipped) >= 10000 {
		clear(r.skipped)
	}
	r.skipped[path] = why
	r.log.emit(Event{Event: evSkipped, Path: path, Message: why})
}

// settling tells, with -v, that a file was seen and waits to be finished.
func (r *runner) settling(path string) {
	if !r.opts.verbose {
		return
	}
	delete(r.skipped, path)
	r.log.emit(Event{Event: evWaiting, Path: path, Message: fmt.Sprintf("not settled yet: sent once unchanged for %s", r.opts.settle)})
}

// resumed says what an earlier run left in the state file, so that a
// restart that publishes nothing is plainly not a failure.
func (r *runner) resumed() {
	published, queued, failed := r.store.counts()
	if published+queued+failed == 0 {
		return
	}
	r.log.emit(Event{Event: evResumed, Count: published, Message: fmt.Sprintf(
		"%s already published by an earlier run (sent again only if they change), %d queued, %d given up",
		plural(published, "file"), queued, failed)})
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
