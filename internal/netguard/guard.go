// Package netguard keeps one listener serving while some of its clients
// are slow or hostile: it paces responses (the download-side twin of the
// request-body pacing in httpapi), caps the connections served at once and
// what one client address may hold of them, and past the cap answers at
// once instead of leaving new clients waiting in the accept queue.
//
// At the cap a new connection takes the place of the connection that has
// kept the daemon waiting longest (a response the client does not read,
// a request header that does not arrive, an idle keep-alive) once that
// wait has lasted StallAfter; when no connection is stalled it gets a
// ServiceUnavailableError with Retry-After. Connections busy on the
// server's side (a handler converting, a body arriving at a fair rate)
// are never displaced.
package netguard

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure one listener's guard.
type Options struct {
	// MaxConns is the number of connections served at once (0: no cap).
	MaxConns int
	// PerClient is the most connections one client address may hold
	// (0: no limit). Behind TrustedProxies it counts the requests in
	// flight of the address X-Forwarded-For names instead.
	PerClient int
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix

	// MinRate is the slowest average rate, in bytes per second, a client
	// must accept a response at once Grace has passed, counting only the
	// time the response's writes waited on the client (0: no minimum).
	MinRate int64
	Grace   time.Duration
	// Idle is the longest a single write may wait for the client to take
	// bytes (0: no limit).
	Idle time.Duration
	// WriteTimeout caps the time from the first byte of a response to its
	// last, for every response but file bodies (see FileBody); 0: no cap.
	WriteTimeout time.Duration

	// StallAfter is how long a connection must have kept the server
	// waiting before a new connection may displace it at the cap
	// (default 500ms).
	StallAfter time.Duration
	// Status is the status of the busy answer: 503, or 500 for the
	// spec's error mode (default 503).
	Status int
	// Listener names the listener in log lines ("api", "content").
	Listener string
	Log      *slog.Logger
}

// Stats count what a guard did since it started.
type Stats struct {
	Open     int   // connections being served now
	Active   int   // of them, with a request being served and no write waiting on the client
	Refused  int64 // answered busy (at the cap or the per-client share)
	Evicted  int64 // stalled connections closed to make room
	Cut      int64 // responses cut for being read too slowly
	Accepted int64
}

// Guard is one listener's guard; its Listener, Handler, ConnState and
// ConnContext are used together (Server does so).
type Guard struct {
	o Options

	mu      sync.Mutex
	conns   map[*conn]struct{}
	perPeer map[netip.Addr]int
	// inflight counts the requests in flight per forwarded client address
	// (PerClient behind TrustedProxies).
	inflight map[netip.Addr]int

	rejecting                     chan struct{} // bounds the goroutines answering busy
	refused, evicted, cut, accept atomic.Int64
	lastWarn                      atomic.Int64
}

// New makes a guard.
func New(o Options) *Guard {
	if o.StallAfter <= 0 {
		o.StallAfter = 500 * time.Millisecond
	}
	if o.Status == 0 {
		o.Status = http.StatusServiceUnavailable
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Guard{o: o, conns: map[*conn]struct{}{}, perPeer: map[netip.Addr]int{}, inflight: map[netip.Addr]int{},
		rejecting: make(chan struct{}, 256)}
}

// Stats are the guard's counters.
func (g *Guard) Stats() Stats {
	g.mu.Lock()
	open, active := len(g.conns), 0
	for c := range g.conns {
		if http.ConnState(c.state.Load()) == http.StateActive && c.writeAt.Load() == 0 {
			active++
		}
	}
	g.mu.Unlock()
	return Stats{Open: open, Active: active, Refused: g.refused.Load(), Evicted: g.evicted.Load(), Cut: g.cut.Load(), Accepted: g.accept.Load()}
}

// Wire sets srv's handler, ConnState and ConnContext to the guard's,
// chaining what srv had; srv must then serve the guard's Listener.
func (g *Guard) Wire(srv *http.Server) {
	srv.Handler = g.Handler(srv.Handler)
	prevState, prevCtx := srv.ConnState, srv.ConnContext
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		g.ConnState(c, s)
		if prevState != nil {
			prevState(c, s)
		}
	}
	srv.ConnContext = g.ConnContext
	if prevCtx != nil {
		srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return prevCtx(g.ConnContext(ctx, c), c) }
	}
}

// trusted says whether a peer's X-Forwarded-For is believed.
func (g *Guard) trusted(a netip.Addr) bool {
	for _, p := range g.o.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// warn logs that the guard is turning clients away, at most once a minute.
func (g *Guard) warn(msg string, args ...any) {
	now := time.Now().UnixNano()
	last := g.lastWarn.Load()
	if now-last < int64(time.Minute) || !g.lastWarn.CompareAndSwap(last, now) {
		return
	}
	st := g.Stats()
	g.o.Log.Warn(msg, append(args, "listener", g.o.Listener, "open", st.Open, "refused_total", st.Refused, "evicted_total", st.Evicted, "cut_total", st.Cut)...)
}
