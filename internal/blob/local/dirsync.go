package local

import "sync"

// dirSyncer shares directory fsyncs between concurrent uploads (group
// commit). An upload that renamed its file into a directory needs an fsync
// of that directory that *began after* its rename. Callers arriving while an
// fsync of the directory is running join the next one, which starts as soon
// as the running one ends and covers all of them; so under load there is at
// most one fsync running and one gathering per directory, and a lone upload
// pays exactly one fsync, as before.
type dirSyncer struct {
	mu   sync.Mutex
	dirs map[string]*dirState
	sync func(dir string) error // syncDir; a test may count calls
}

type dirState struct {
	running bool
	next    *syncRound // gathering callers for the fsync after the running one
}

type syncRound struct {
	done chan struct{}
	err  error
}

func newDirSyncer() *dirSyncer {
	return &dirSyncer{dirs: map[string]*dirState{}, sync: syncDir}
}

// Sync returns once an fsync of dir that began after the call has ended,
// with its error.
func (d *dirSyncer) Sync(dir string) error {
	d.mu.Lock()
	st := d.dirs[dir]
	if st == nil {
		st = &dirState{}
		d.dirs[dir] = st
	}
	r := st.next
	if r == nil {
		r = &syncRound{done: make(chan struct{})}
		st.next = r
	}
	if !st.running {
		d.runLocked(dir, st)
	}
	d.mu.Unlock()
	<-r.done
	return r.err
}

// runLocked starts the gathered round of dir; when it ends, the next
// gathered round (if any) starts, else the directory's state is dropped.
func (d *dirSyncer) runLocked(dir string, st *dirState) {
	r := st.next
	st.next, st.running = nil, true
	go func() {
		r.err = d.sync(dir)
		close(r.done)
		d.mu.Lock()
		defer d.mu.Unlock()
		if st.next != nil {
			d.runLocked(dir, st)
			return
		}
		st.running = false
		delete(d.dirs, dir)
	}()
}
