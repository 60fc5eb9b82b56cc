package netguard

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// chunk is the most written under one deadline: the deadline moves on
// after every chunk the client accepts.
const chunk = 64 << 10

// conn is an admitted connection: it paces the responses written to it
// and says, for the cap, whether it is keeping the server waiting.
type conn struct {
	net.Conn
	g        *Guard
	peer     netip.Addr
	released bool // under g.mu

	state   atomic.Int32 // http.ConnState
	stateAt atomic.Int64 // when state began, unix ns
	writeAt atomic.Int64 // when the write in progress began, unix ns; 0: none

	// The pacing of the current response, used by the goroutine serving
	// the connection only (net/http writes a connection from one
	// goroutine at a time).
	begun    bool          // a handler runs: the response is paced from its first byte
	started  bool          // the response's first byte was written
	capped   bool          // WriteTimeout applies (not a file body)
	n        int64         // bytes of the response the client accepted
	blocked  time.Duration // time the response's writes waited on the client
	capAt    time.Time     // WriteTimeout's deadline (zero: none)
	external time.Time     // a write deadline the server or a handler set
	applied  time.Time     // the write deadline on the socket now (zero: none)

	// gathering: the response's bytes are collected in gathered and go
	// to the socket in one write when it ends (Gather).
	gathering bool
	gathered  *[]byte
}

func (c *conn) setState(s http.ConnState, at time.Time) {
	c.state.Store(int32(s))
	c.stateAt.Store(at.UnixNano())
}

// stalledSince is since when the connection has kept the server waiting
// on its client (unix ns): a write the client does not take, or no
// request yet (a new or idle connection, or headers still arriving). 0:
// the server is busy with it (a handler runs, a body arrives).
func (c *conn) stalledSince() int64 {
	if w := c.writeAt.Load(); w != 0 {
		return w
	}
	switch http.ConnState(c.state.Load()) {
	case http.StateNew, http.StateIdle:
		return c.stateAt.Load()
	}
	return 0
}

// deadline is the write deadline at now: the earliest of the idle limit,
// the moment the client's rate would fall below MinRate after Grace, the
// response's WriteTimeout, and an external deadline. The rate counts only
// the time writes waited on the client: a handler slow to produce its
// bytes (a backup, a zip of a site) is not the client's fault.
func (c *conn) deadline(now time.Time) time.Time {
	o := &c.g.o
	d := c.external
	earlier := func(t time.Time) {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	if o.Idle > 0 {
		earlier(now.Add(o.Idle))
	}
	if c.started {
		if o.MinRate > 0 {
			earlier(now.Add(o.Grace + time.Duration(float64(c.n)/float64(o.MinRate)*float64(time.Second)) - c.blocked))
		}
		earlier(c.capAt)
	}
	return d
}

// slackDiv bounds how much earlier than computed a chunk's deadline may
// be: the deadline already on the socket is kept when it is not later
// than the computed one and at most 1/slackDiv of the time the chunk is
// allowed earlier. Setting a deadline is a timer update in the runtime;
// a small answer's chunks (two writes) and the next answers on the
// connection mostly keep the one set for the first.
const slackDiv = 32

// before sets the deadline of the next chunk and marks it in progress.
func (c *conn) before() {
	now := time.Now()
	if c.begun && !c.started {
		c.started, c.n, c.blocked = true, 0, 0
		if c.capped && c.g.o.WriteTimeout > 0 {
			c.capAt = now.Add(c.g.o.WriteTimeout)
		}
	}
	if d := c.deadline(now); !keep(c.applied, d, now) {
		c.applied = d
		c.Conn.SetWriteDeadline(d)
	}
	c.writeAt.Store(now.UnixNano())
}

// keep tells whether the deadline applied (on the socket) may stand for
// a write at now that must end by want: never later than want, never
// more than 1/slackDiv of the time left earlier (so never in the past).
func keep(applied, want, now time.Time) bool {
	if applied.IsZero() || want.IsZero() {
		return applied.IsZero() && want.IsZero()
	}
	return !applied.After(want) && want.Sub(applied) <= want.Sub(now)/slackDiv
}

func (c *conn) after(n int64) {
	if began := c.writeAt.Swap(0); began != 0 {
		c.blocked += time.Duration(time.Now().UnixNano() - began)
	}
	c.n += n
}

// failed turns a missed deadline into a reset of the connection, so the
// bytes the client would not take do not linger in the kernel.
func (c *conn) failed(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.g.cut.Add(1)
		c.g.warn("cutting responses their clients read too slowly (download_min_rate, download_idle_timeout, write_timeout)")
		if l, ok := c.Conn.(interface{ SetLinger(int) error }); ok {
			l.SetLinger(0)
		}
	}
	return err
}

func (c *conn) Write(p []byte) (int, error) {
	if c.gathering {
		if c.gathered == nil {
			c.gathered = gatherBufs.Get().(*[]byte)
		}
		if len(*c.gathered)+len(p) <= gatherMax {
			*c.gathered = append(*c.gathered, p...)
			return len(p), nil
		}
		if err := c.flush(); err != nil {
			return 0, err
		}
	}
	return c.write(p)
}

// write sends p a chunk at a time under the moving deadline.
func (c *conn) write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		k := min(len(p), chunk)
		c.before()
		n, err := c.Conn.Write(p[:k])
		c.after(int64(n))
		total += n
		if err != nil {
			return total, c.failed(err)
		}
		p = p[n:]
	}
	return total, nil
}

// gatherMax bounds the bytes of a response gathered for one write: a
// small file's answer (its header and body) fits, a larger one is
// written as it comes from there on.
const gatherMax = 32 << 10

var gatherBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// flush ends gathering: what was gathered goes to the socket (paced like
// any write). A failure ends the connection, since net/http, which
// handed the bytes over earlier, would otherwise go on with the next
// request after an answer cut short.
func (c *conn) flush() error {
	c.gathering = false
	b := c.gathered
	if b == nil {
		return nil
	}
	c.gathered = nil
	var err error
	if len(*b) > 0 {
		if _, err = c.write(*b); err != nil {
			abort(c.Conn)
		}
	}
	*b = (*b)[:0]
	gatherBufs.Put(b)
	return err
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writerOnly hides conn's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }

// ReadFrom keeps the kernel's file-to-socket copy (sendfile) for a file
// body, a chunk at a time under the moving deadline.
func (c *conn) ReadFrom(src io.Reader) (int64, error) {
	if err := c.flush(); err != nil {
		return 0, err
	}
	rf, ok := c.Conn.(io.ReaderFrom)
	f, lr := fileOf(src)
	if !ok || f == nil {
		b := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(b)
		return io.CopyBuffer(writerOnly{c}, src, *b)
	}
	var total int64
	for lr == nil || lr.N > 0 {
		k := int64(chunk)
		if lr != nil {
			k = min(k, lr.N)
		}
		c.before()
		n, err := rf.ReadFrom(&io.LimitedReader{R: f, N: k})
		c.after(n)
		total += n
		if lr != nil {
			lr.N -= n
		}
		if err != nil {
			return total, c.failed(err)
		}
		if n < k {
			break // the end of the file
		}
	}
	return total, nil
}

// fileOf finds the file under a body net/http copies with ReadFrom: the
// file itself, or a LimitedReader of one (a range); nil if neither.
func fileOf(src io.Reader) (*os.File, *io.LimitedReader) {
	switch r := src.(type) {
	case *os.File:
		return r, nil
	case *io.LimitedReader:
		if f, ok := r.R.(*os.File); ok {
			return f, r
		}
	}
	return nil, nil
}

// SetWriteDeadline records a deadline the server or a handler sets; every
// write takes the earliest of it and the pacing's (before). It goes to
// the socket at once only when earlier than the one there, so a write in
// progress ends by it; net/http's clearing after every answer (a zero
// time) waits for the next write, which sets the pacing's deadline anyway.
//
// net/http calls it when an answer is done (to clear WriteTimeout's
// deadline), so a gathered answer is sent here.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.flush()
	c.external = t
	if t.IsZero() || (!c.applied.IsZero() && !t.Before(c.applied)) {
		return nil
	}
	c.applied = t
	return c.Conn.SetWriteDeadline(t)
}

func (c *conn) SetDeadline(t time.Time) error {
	c.flush()
	c.external, c.applied = t, t
	return c.Conn.SetDeadline(t)
}

// CloseWrite lets net/http half-close the connection as it would the bare one.
func (c *conn) CloseWrite() error {
	c.flush()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *conn) Close() error {
	c.g.release(c)
	return c.Conn.Close()
}

// abort closes the connection with a reset (it was displaced).
func (c *conn) abort() { abort(c.Conn) }
