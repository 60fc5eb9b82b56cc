package boltstore

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// groupCommit shares bbolt write transactions between concurrent writers
// (group commit), like db.Batch but without its wait: bbolt's Batch holds
// every write up to MaxBatchDelay (10 ms) for company, which a lone upload
// paid in full. Here a write arriving while no commit runs starts one at
// once; writes arriving while a commit runs gather for the next one, which
// starts as soon as the running one ends and commits them all in one
// transaction (one pair of fdatasyncs). So a lone write pays exactly one
// commit, and under load at most one commit runs and one gathers.
//
// As with db.Batch, fn may run more than once: when one fn of a group fails
// (or panics), the group's transaction is rolled back, the others are
// committed again without it, and it runs alone for its own answer (once
// only, when it was the group's first: a lone write that fails runs once).
type groupCommit struct {
	db  *bolt.DB
	log *slog.Logger // where a write's panic and its stack go; nil: nowhere

	mu      sync.Mutex
	running bool
	next    []*groupCall
}

type groupCall struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// maxGroup bounds one transaction (bbolt's default MaxBatchSize).
const maxGroup = 1000

// do runs fn in a write transaction shared with the writes gathered with
// it, and returns once that transaction is committed (or fn failed).
func (g *groupCommit) do(fn func(*bolt.Tx) error) error {
	c := &groupCall{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.next = append(g.next, c)
	if !g.running {
		g.running = true
		go g.loop()
	}
	g.mu.Unlock()
	return <-c.done
}

// loop commits the gathered groups, one after another, until none is left.
func (g *groupCommit) loop() {
	for {
		g.mu.Lock()
		calls := g.next
		if len(calls) > maxGroup {
			calls, g.next = calls[:maxGroup:maxGroup], calls[maxGroup:]
		} else {
			g.next = nil
		}
		if len(calls) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		g.commit(calls)
	}
}

// commit commits calls in one transaction. A call that fails is taken
// out, runs alone for its answer (unless it ran first, see below), and
// the rest are committed without it.
func (g *groupCommit) commit(calls []*groupCall) {
	for len(calls) > 0 {
		failed := -1
		err := g.db.Update(func(tx *bolt.Tx) error {
			for i, c := range calls {
				if err := g.safeCall(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, c := range calls {
				c.done <- err // nil, or the commit's own error, shared by all
			}
			return
		}
		c := calls[failed]
		if failed == 0 {
			// It ran first, on nothing but the committed state: that
			// was already its run alone, and err its answer (a lone
			// call is this case). Running it again would only repeat it.
			c.done <- err
		} else {
			c.done <- g.db.Update(func(tx *bolt.Tx) error { return g.safeCall(c.fn, tx) })
		}
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// safeCall turns a panic of fn into its error, so one bad write cannot take
// the committer (and every writer waiting on it) down. The error carries
// the panic's value; its stack, which the error cannot carry readably,
// goes to the log, so the bug can still be found.
func (g *groupCommit) safeCall(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("boltstore: write panicked: %v", p)
			if g.log != nil {
				// debug.Stack here, in the deferred call, still holds the
				// panicking frames: the stack unwinds after recover.
				g.log.Error("a database write panicked; its transaction was rolled back",
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
		}
	}()
	return fn(tx)
}
