package client

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Retry is one wait before another attempt, as told to Options.OnRetry.
type Retry struct {
	// Attempt is the number of the attempt that follows the wait (2 for the
	// first retry); Attempts is the most there will be.
	Attempt, Attempts int
	Wait              time.Duration
	// Err is why the previous attempt failed.
	Err error
}

// Reason is Err in a few words, e.g. "connection refused".
func (r Retry) Reason() string { return reason(r.Err) }

// RetryWindow is the shortest and longest total wait of a request whose
// every attempt fails, given Options' Retries, RetryWait and RetryMaxWait;
// the shortest is what a restarting server can count on.
func RetryWindow(retries int, wait, maxWait time.Duration) (lo, hi time.Duration) {
	for i := range retries {
		d := nominalWait(i, wait, maxWait)
		lo += d - d/2
		hi += d
	}
	return lo, hi
}

// nominalWait is wait·2^attempt capped at maxWait.
func nominalWait(attempt int, wait, maxWait time.Duration) time.Duration {
	d := wait
	for i := 0; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// backoff is the nominal wait jittered into [d/2, d], so that many clients
// retrying at once spread out while the window stays bounded below.
func (c *Client) backoff(attempt int) time.Duration {
	d := nominalWait(attempt, c.opts.RetryWait, c.opts.RetryMaxWait)
	half := d / 2
	return d - half + rand.N(half+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// safeToRepeat says whether an attempt that failed with err may be sent
// again. Idempotent requests and uploads (which the caller marked) always
// may; any other request only when the server surely never saw it, because
// the connection was not even made, or the server answered with an error.
func safeToRepeat(cl call, err error) bool {
	if cl.idempotent() {
		return true
	}
	var apiErr *report.Error
	if errors.As(err, &apiErr) {
		return true // the spec's errors store nothing
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (cl call) idempotent() bool {
	switch cl.method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return cl.retryPost
}

// reason shortens a failed attempt's error to what a person needs in a
// retry line; the full error is in the final message if retries run out.
func reason(err error) string {
	var apiErr *report.Error
	switch {
	case err == nil:
		return "unknown error"
	case errors.As(err, &apiErr):
		return apiErr.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by server"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return err.Error()
}
