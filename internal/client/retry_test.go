package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// TestDefaultRetryWindow: with the defaults, a request that keeps failing
// keeps trying for at least 15 s, long enough for a daemon restart, and
// gives up within a bounded time.
func TestDefaultRetryWindow(t *testing.T) {
	lo, hi := RetryWindow(DefaultRetries, DefaultRetryWait, DefaultRetryMaxWait)
	if lo < 15*time.Second || hi > time.Minute {
		t.Fatalf("default retry window %v..%v, want at least 15s and at most 1m", lo, hi)
	}
}

// TestBackoffBounds: every wait is within [d/2, d] of its nominal value and
// the nominal value doubles up to the cap.
func TestBackoffBounds(t *testing.T) {
	c, err := New(Options{Server: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{1, 2, 4, 5, 5, 5, 5, 5}
	for i, w := range want {
		w *= time.Second
		if got := nominalWait(i, c.opts.RetryWait, c.opts.RetryMaxWait); got != w {
			t.Fatalf("nominal wait %d = %v, want %v", i, got, w)
		}
		for range 100 {
			if d := c.backoff(i); d < w/2 || d > w {
				t.Fatalf("backoff(%d) = %v, outside [%v, %v]", i, d, w/2, w)
			}
		}
	}
}

// TestOnRetryEvents: each wait is reported once, numbered, with the cause.
func TestOnRetryEvents(t *testing.T) {
	addr := deadAddr(t)
	var got []Retry
	o := fastOpts("http://" + addr)
	o.OnRetry = func(r Retry) { got = append(got, r) }
	c, _ := New(o)
	_, err := c.Ping(t.Context())
	if !IsUnreachable(err) {
		t.Fatalf("err = %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("%d retry events, want 3: %+v", len(got), got)
	}
	for i, r := range got {
		if r.Attempt != i+2 || r.Attempts != 4 || r.Wait <= 0 || r.Reason() != "connection refused" {
			t.Errorf("event %d = %+v (reason %q)", i, r, r.Reason())
		}
	}
}

// TestCreateNotRepeatedAfterDrop: a POST that may have reached the server
// is not sent twice (it could create two projects), but one that could not
// even connect is retried like any other request.
func TestCreateNotRepeatedAfterDrop(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer srv.Close()
	c, _ := New(fastOpts(srv.URL))
	_, err := c.CreateProject(t.Context(), report.ProjectCreate{Name: "x"})
	if err == nil || IsUnreachable(err) || !strings.Contains(err.Error(), "not repeated") || attempts.Load() != 1 {
		t.Fatalf("err=%v attempts=%d, want a not-repeated error after 1 attempt", err, attempts.Load())
	}

	c, _ = New(fastOpts("http://" + deadAddr(t)))
	_, err = c.CreateProject(t.Context(), report.ProjectCreate{Name: "x"})
	var u *UnreachableError
	if !errors.As(err, &u) || u.Attempts != 4 {
		t.Fatalf("refused create: err = %v, want unreachable after 4 attempts", err)
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&report.Error{Kind: report.Storage, Message: "disk full"}, "StorageError: disk full"},
		{fmt.Errorf("post: %w", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("weird")}), "weird"},
	}
	for _, tt := range tests {
		if got := reason(tt.err); got != tt.want {
			t.Errorf("reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if got := reason(nil); !strings.Contains(got, "unknown") {
		t.Errorf("reason(nil) = %q", got)
	}
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRetryAfterHonoured: a 503 ServiceUnavailableError with Retry-After
// (reportd's answer while its database is down) is retried after the wait
// the server asked for, capped by RetryMaxWait, and the request succeeds
// once the server is back.
func TestRetryAfterHonoured(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) <= 2 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":"ServiceUnavailableError: the metadata store (PostgreSQL) is unavailable; try again shortly","type":"ServiceUnavailableError"}`)
			return
		}
		fmt.Fprint(w, `{"version":"v","timestamp":"2026-03-02T08:30:00Z"}`)
	}))
	defer srv.Close()
	var waits []time.Duration
	o := fastOpts(srv.URL)
	o.RetryMaxWait = 5 * time.Second
	o.OnRetry = func(r Retry) {
		waits = append(waits, r.Wait)
		if !strings.Contains(r.Reason(), "ServiceUnavailableError") {
			t.Errorf("reason %q", r.Reason())
		}
	}
	c, _ := New(o)
	if _, err := c.Ping(t.Context()); err != nil {
		t.Fatalf("ping after two 503s: %v", err)
	}
	if len(waits) != 2 || waits[0] < time.Second || waits[1] < time.Second {
		t.Errorf("waits %v, want two of at least the 1s Retry-After", waits)
	}

	// Never longer than RetryMaxWait, whatever the server asks.
	c, _ = New(fastOpts(srv.URL))
	err := &retryAfterError{err: report.Errorf(report.Unavailable, "x"), after: time.Hour}
	if d := c.waitFor(0, err); d > c.opts.RetryMaxWait {
		t.Errorf("wait %v beyond RetryMaxWait %v", d, c.opts.RetryMaxWait)
	}
}
