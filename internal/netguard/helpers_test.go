package netguard

import (
	"net"
	"sync"
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
