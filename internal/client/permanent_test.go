package client

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestUnresolvableHostNotRetried: a host-name typo fails on the first
// attempt, as unreachable, saying which name did not resolve; names under
// .invalid never reach a DNS server (RFC 6761), so this needs no network.
func TestUnresolvableHostNotRetried(t *testing.T) {
	var retries int
	o := fastOpts("http://reportd-typo.invalid:8080")
	o.RetryWait, o.RetryMaxWait = time.Second, 5*time.Second
	o.OnRetry = func(Retry) { retries++ }
	c, _ := New(o)
	_, err := c.Ping(t.Context())
	var u *UnreachableError
	if !errors.As(err, &u) || u.Attempts != 1 || retries != 0 {
		t.Fatalf("err = %v (retries %d), want unreachable after 1 attempt", err, retries)
	}
	for _, want := range []string{`cannot resolve host name "reportd-typo.invalid"`, "no such host", "not retried"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// TestUntrustedCertificateNotRetried: a server whose certificate does not
// verify is not asked again, and the message says it was the certificate.
func TestUntrustedCertificateNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c, _ := New(fastOpts(srv.URL))
	_, err := c.Ping(t.Context())
	var u *UnreachableError
	if !errors.As(err, &u) || u.Attempts != 1 || u.Permanent == "" {
		t.Fatalf("err = %v, want unreachable after 1 attempt, not retried", err)
	}
	if !strings.Contains(err.Error(), "TLS certificate verification failed") {
		t.Errorf("message %q does not say the certificate failed", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the handler", hits.Load())
	}
}
