package convert

import (
	"io"
	"time"
)

// Chromium keeps much of a large document's memory after its page is gone,
// so the every-8th-job memory check (chromium.release) alone let a browser
// sit at gigabytes, idle, after a few large Markdown jobs. The bound
// (Config.MaxWorkerRSS) is therefore also checked after every large job and
// once the browser has had no job for a while.
const (
	largeJobBytes  = 1 << 20          // input or output PDF above this makes a job large
	idleCheckAfter = 10 * time.Second // quiet time after the last job before the idle check
)

// armIdleCheckLocked (re)starts the idle check's timer; c.mu is held.
func (c *chromium) armIdleCheckLocked() {
	if c.cfg.MaxWorkerRSS <= 0 {
		return
	}
	if c.idle == nil {
		c.idle = time.AfterFunc(c.idleAfter, c.idleCheck)
		return
	}
	c.idle.Reset(c.idleAfter)
}

// idleCheck replaces the browser when it is idle and over the memory bound.
// A browser still in use is left alone and checked again later: a job's
// release re-arms the timer, but a spare page being made (which also counts
// as in flight) re-arms nothing, so the check re-arms itself.
func (c *chromium) idleCheck() {
	select {
	case <-c.quit:
		return
	default:
	}
	c.mu.Lock()
	b := c.cur
	busy := b == nil || b.retired || b.inflight > 0
	if busy && b != nil && !b.retired {
		c.armIdleCheckLocked()
	}
	c.mu.Unlock()
	if busy || !overMemory(b.pid, c.cfg.MaxWorkerRSS) {
		return
	}
	if c.retire(b, "memory", nil) {
		c.warm()
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}
