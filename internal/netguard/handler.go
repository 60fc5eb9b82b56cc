package netguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

type ctxKey struct{}

// ConnContext puts the guarded connection in every request's context
// (http.Server.ConnContext).
func (g *Guard) ConnContext(ctx context.Context, nc net.Conn) context.Context {
	if c, ok := nc.(*conn); ok && c.g == g {
		return context.WithValue(ctx, ctxKey{}, c)
	}
	return ctx
}

// ConnState follows the connections' states (http.Server.ConnState): a
// new or idle connection waits for its client; a request that begins
// ends the previous response's pacing.
func (g *Guard) ConnState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*conn)
	if !ok || c.g != g {
		return
	}
	switch s {
	case http.StateActive, http.StateIdle:
		// Called by the goroutine serving the connection, between requests.
		c.flush()
		c.begun, c.started, c.capAt = false, false, time.Time{}
		c.setState(s, time.Now())
	case http.StateClosed, http.StateHijacked:
		c.setState(s, time.Now())
		g.release(c)
	}
}

// FileBody exempts the response of the request with ctx from
// WriteTimeout: a file body is bounded by the minimum rate instead, so a
// large download on a slow link finishes.
func FileBody(ctx context.Context) {
	if c, ok := ctx.Value(ctxKey{}).(*conn); ok {
		c.capped = false
		c.capAt = time.Time{}
	}
}

// Gather asks that the response to r reach the client in one write when
// it ends, instead of as net/http's 4 KiB buffer fills (two writes, and
// two wakeups of the client, for an answer of a few KiB): for handlers
// that write a small answer at once and never flush it themselves (an
// explicit flush is held back until the answer ends). Up to gatherMax
// bytes are gathered; past that the answer is written as it comes.
// HTTP/1 only. Not for handlers that hijack the connection (what was
// gathered would be lost) or that answer before reading a request body
// they want (the answer now waits for net/http's discard of the body).
func Gather(r *http.Request) {
	if r.ProtoMajor != 1 {
		return
	}
	if c, ok := r.Context().Value(ctxKey{}).(*conn); ok {
		c.gathering = true
	}
}

// Handler paces the responses of h and, behind a trusted proxy, limits the
// requests in flight of each forwarded client address to PerClient.
func (g *Guard) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Context().Value(ctxKey{}).(*conn)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		c.begun, c.started, c.capped, c.capAt = true, false, true, time.Time{}
		if g.o.PerClient > 0 && g.trusted(c.peer) {
			client := g.forwardedClient(r, c.peer)
			if !g.enter(client) {
				g.refused.Add(1)
				busy(w, g.o.Status, fmt.Sprintf("this client address (%s, from X-Forwarded-For) already has %d requests in flight (max_connections_per_client: %d); retry when one of them is done",
					client, g.o.PerClient, g.o.PerClient))
				return
			}
			defer g.leave(client)
		}
		h.ServeHTTP(w, r)
	})
}

// forwardedClient is the address X-Forwarded-For names for a request from
// a trusted proxy: the rightmost address that is not itself a trusted
// proxy (what is left of it the client could have written). The proxy's
// own address when there is none.
func (g *Guard) forwardedClient(r *http.Request, peer netip.Addr) netip.Addr {
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			if ap, perr := netip.ParseAddrPort(strings.TrimSpace(hops[i])); perr == nil {
				a, err = ap.Addr(), nil
			}
		}
		if err != nil {
			break // a hop that is not an address: believe nothing left of it
		}
		if a = a.Unmap(); !g.trusted(a) {
			return a
		}
	}
	return peer
}

func (g *Guard) enter(client netip.Addr) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight[client] >= g.o.PerClient {
		return false
	}
	g.inflight[client]++
	return true
}

func (g *Guard) leave(client netip.Addr) {
	g.mu.Lock()
	if g.inflight[client]--; g.inflight[client] <= 0 {
		delete(g.inflight, client)
	}
	g.mu.Unlock()
}

// busy writes the busy answer through a handler's ResponseWriter.
func busy(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Retry-After", retryAfter)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(status)
	w.Write(busyBody(msg))
}
