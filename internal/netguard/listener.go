package netguard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// listener admits each accepted connection, displaces a stalled one, or
// answers busy; it never leaves a connection waiting in the kernel's queue.
type listener struct {
	net.Listener
	g *Guard
}

// Listener wraps ln. Serve the result with the guard's ConnState and
// ConnContext set on the server (see Server).
func (g *Guard) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, g: g} }

func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.g.admit(nc); c != nil {
			return c, nil
		}
	}
}

// peerOf is a connection's remote IP (unmapped); the zero Addr for a unix
// socket, which is never limited per client.
func peerOf(nc net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(nc.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// admit registers nc, displacing a stalled connection if the cap or the
// client's share is full; nil: nc was answered busy.
func (g *Guard) admit(nc net.Conn) *conn {
	now := time.Now()
	peer := peerOf(nc)
	perClient := g.o.PerClient > 0 && peer.IsValid() && !g.trusted(peer)
	var victim *conn
	var busy string
	g.mu.Lock()
	if perClient && g.perPeer[peer] >= g.o.PerClient {
		if victim = g.stalledLocked(now, peer, true); victim == nil {
			busy = fmt.Sprintf("this client address already holds %d connections (max_connections_per_client: %d); retry when one of them is done", g.perPeer[peer], g.o.PerClient)
		}
	} else if g.o.MaxConns > 0 && len(g.conns) >= g.o.MaxConns {
		if victim = g.stalledLocked(now, netip.Addr{}, false); victim == nil {
			busy = fmt.Sprintf("reportd is serving as many connections as it may (max_connections: %d); retry shortly", g.o.MaxConns)
		}
	}
	if busy != "" {
		g.mu.Unlock()
		g.refused.Add(1)
		g.warn("turning connections away: the connection cap or a client's share is full and no connection is stalled", "reason", busy)
		g.reject(nc, busy)
		return nil
	}
	if victim != nil {
		g.releaseLocked(victim)
	}
	limitUnsent(nc)
	c := &conn{Conn: nc, g: g, peer: peer}
	c.setState(http.StateNew, now)
	g.conns[c] = struct{}{}
	g.perPeer[peer]++
	g.mu.Unlock()
	g.accept.Add(1)
	if victim != nil {
		g.evicted.Add(1)
		g.warn("closing stalled connections to make room for new ones (the connection cap or a client's share is full)")
		victim.abort()
	}
	return c
}

// stalledLocked is the connection that has kept the server waiting the
// longest, at least StallAfter (of peer only, if only); nil if none.
func (g *Guard) stalledLocked(now time.Time, peer netip.Addr, only bool) *conn {
	var best *conn
	var bestSince int64
	limit := now.Add(-g.o.StallAfter).UnixNano()
	for c := range g.conns {
		if only && c.peer != peer {
			continue
		}
		since := c.stalledSince()
		if since == 0 || since > limit {
			continue
		}
		if best == nil || since < bestSince {
			best, bestSince = c, since
		}
	}
	return best
}

// releaseLocked gives up c's place (once).
func (g *Guard) releaseLocked(c *conn) {
	if c.released {
		return
	}
	c.released = true
	delete(g.conns, c)
	if g.perPeer[c.peer]--; g.perPeer[c.peer] <= 0 {
		delete(g.perPeer, c.peer)
	}
}

func (g *Guard) release(c *conn) {
	g.mu.Lock()
	g.releaseLocked(c)
	g.mu.Unlock()
}

// busyBody is the spec's error body of a busy answer.
func busyBody(msg string) []byte {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
		Type  string `json:"type"`
	}{"ServiceUnavailableError: " + msg, "ServiceUnavailableError"})
	return b
}

// retryAfter is the Retry-After of a busy answer, in seconds.
const retryAfter = "2"

// reject answers busy on a connection that was never admitted, in the
// background and within a few seconds: it reads the request's header (an
// answer before the request is one HTTP clients discard), writes the
// answer, stops writing, and reads what else the client sent so that
// closing does not reset the connection before the client has read the
// answer. Past 256 such answers at once, connections are closed without one.
func (g *Guard) reject(nc net.Conn, msg string) {
	select {
	case g.rejecting <- struct{}{}:
	default:
		abort(nc)
		return
	}
	go func() {
		defer func() { <-g.rejecting }()
		defer nc.Close()
		body := busyBody(msg)
		nc.SetDeadline(time.Now().Add(3 * time.Second))
		if !readHeader(bufio.NewReaderSize(io.LimitReader(nc, 64<<10), 4096)) {
			abort(nc)
			return
		}
		_, err := fmt.Fprintf(nc, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nRetry-After: %s\r\n"+
			"Access-Control-Allow-Origin: *\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n%s",
			g.o.Status, http.StatusText(g.o.Status), len(body), retryAfter, body)
		if err != nil {
			return
		}
		if cw, ok := nc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(nc, 256<<10))
	}()
}

// unsentLimit bounds the bytes a connection keeps queued in the kernel
// beyond what is in flight (TCP_NOTSENT_LOWAT): the kernel still sends as
// fast as the path allows, but a client that stops reading holds a few
// hundred KiB of memory instead of megabytes, and its writes block (and
// are paced) as soon as it stops, not after the buffers filled.
const unsentLimit = 128 << 10

func limitUnsent(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	if rc, err := sc.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, unsentLimit) })
	}
}

// readHeader reads up to the blank line that ends a request's header.
func readHeader(br *bufio.Reader) bool {
	for lines := 0; ; lines++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if lines > 0 && (len(line) == 1 || len(line) == 2 && line[0] == '\r') {
			return true
		}
	}
}

// abort closes nc with a reset: whatever it still had to send is dropped
// at once instead of lingering in the kernel for a client that does not read.
func abort(nc net.Conn) {
	if l, ok := nc.(interface{ SetLinger(int) error }); ok {
		l.SetLinger(0)
	}
	nc.Close()
}
