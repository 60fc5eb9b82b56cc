package netguard

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// keepListener wraps each connection it accepts with wrap (a test's
// counting conn) and keeps them for the test to read.
type keepListener[C net.Conn] struct {
	net.Listener
	wrap  func(net.Conn) C
	mu    sync.Mutex
	conns []C
}

func (l *keepListener[C]) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	w := l.wrap(c)
	l.mu.Lock()
	l.conns = append(l.conns, w)
	l.mu.Unlock()
	return w, nil
}

// all returns the connections accepted so far.
func (l *keepListener[C]) all() []C {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]C(nil), l.conns...)
}

// serveOne serves srv, wired to g, on l and returns a client connection to
// it (closed with the test) and its reader, with a generous deadline.
func serveOne(t *testing.T, g *Guard, srv *http.Server, l net.Listener) (net.Conn, *bufio.Reader) {
	t.Helper()
	g.Wire(srv)
	go srv.Serve(g.Listener(l))
	t.Cleanup(func() { srv.Close() })
	c, err := net.DialTimeout("tcp", l.Addr().String(), waitLong)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitLong))
	return c, bufio.NewReader(c)
}
