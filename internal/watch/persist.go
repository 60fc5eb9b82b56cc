package watch

import "time"

func (r *runner) seen(path string) { r.seenCh <- path }

// persist writes newly seen files to the queue bucket in batches, so that a
// file seen before a crash or restart is still published afterwards even
// with --initial-scan=skip, without a disk sync per file.
func (r *runner) persist(done chan<- struct{}) {
	defer close(done)
	for first := range r.seenCh {
		batch := []string{first}
		timer := time.NewTimer(20 * time.Millisecond)
	collect:
		for len(batch) < 5000 {
			select {
			case p, ok := <-r.seenCh:
				if !ok {
					break collect
				}
				batch = append(batch, p)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		if err := r.store.enqueue(batch, r.now()); err != nil {
			r.log.emit(Event{Event: evError, Message: "cannot write the queue to the state file", Error: err.Error()})
		}
	}
}
