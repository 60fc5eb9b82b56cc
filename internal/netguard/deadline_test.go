package netguard

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestKeep: the deadline on the socket stands only when it is not later
// than the one computed and at most 1/slackDiv of the time left earlier.
func TestKeep(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	for _, c := range []struct {
		applied, want time.Time
		keep          bool
	}{
		{time.Time{}, time.Time{}, true},
		{time.Time{}, at(time.Second), false},
		{at(time.Second), time.Time{}, false},
		{at(10 * time.Second), at(10 * time.Second), true},
		{at(10*time.Second - 300*time.Millisecond), at(10 * time.Second), true},  // 0.3s of 10s early
		{at(10*time.Second - 400*time.Millisecond), at(10 * time.Second), false}, // 0.4s of 10s: too early
		{at(11 * time.Second), at(10 * time.Second), false},                      // later: never
		{at(-time.Second), at(time.Second), false},                               // in the past
		{at(-time.Second), at(-time.Second), false},                              // a past deadline is set again
	} {
		if got := keep(c.applied, c.want, now); got != c.keep {
			t.Errorf("keep(applied %v, want %v) = %v, want %v", c.applied.Sub(now), c.want.Sub(now), got, c.keep)
		}
	}
}

// deadlines counts the write deadlines that reach the socket and
// remembers the last.
type deadlines struct {
	net.Conn
	mu   sync.Mutex
	n    int
	last time.Time
}

func (d *deadlines) SetWriteDeadline(t time.Time) error {
	d.mu.Lock()
	d.n++
	d.last = t
	d.mu.Unlock()
	return d.Conn.SetWriteDeadline(t)
}

// TestSmallAnswersSetFewDeadlines: answers of a few KiB on one keep-alive
// connection (two writes each) keep the socket's write deadline for a
// while instead of setting it per write and clearing it per answer; every
// answer arrives whole, and the deadline on the socket is never later
// than the pacing's.
func TestSmallAnswersSetFewDeadlines(t *testing.T) {
	body := bytes.Repeat([]byte("p"), 12<<10)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &keepListener[*deadlines]{Listener: ln, wrap: func(c net.Conn) *deadlines { return &deadlines{Conn: c} }}
	o := Options{MinRate: 32 << 10, Grace: 10 * time.Second, Idle: 30 * time.Second, WriteTimeout: 5 * time.Minute}
	g := New(o)
	srv := &http.Server{ReadHeaderTimeout: waitLong, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})}
	c, br := serveOne(t, g, srv, cl)
	const answers = 200
	start := time.Now()
	for i := range answers {
		getRaw(t, c, "/")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !bytes.Equal(b, body) {
			t.Fatalf("answer %d: %d bytes, %v", i, len(b), err)
		}
	}
	d := cl.all()[0]
	d.mu.Lock()
	n, last := d.n, d.last
	d.mu.Unlock()
	// Before: three per answer (one per write, and net/http's clearing).
	// Now one per 1/slackDiv of the 10 s the pacing allows (0.31 s): the
	// bound is reached only if the answers took 30 s.
	if n > answers/2 {
		t.Errorf("%d write deadlines set for %d answers of two writes each, want a few", n, answers)
	}
	// The last one is a pacing deadline: at most Grace plus the rate's
	// allowance for one answer from its last write, never none.
	if latest := time.Now().Add(o.Grace + time.Duration(len(body))*time.Second/time.Duration(o.MinRate)); last.IsZero() || last.After(latest) || last.Before(start) {
		t.Errorf("deadline on the socket %v after the answers, want between %v and %v", last, start, latest)
	}
}
