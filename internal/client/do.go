package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/reportd/reportd/internal/report"
)

// call describes one API request. body, when set, is called once per
// attempt so that every retry streams the file again from its start.
type call struct {
	method string
	path   string
	query  url.Values
	json   any
	body   func() (r io.ReadCloser, contentType string, err error)
	out    any  // decoded from a 2xx JSON body
	stream bool // hand the raw body to the caller instead of decoding it
	// retryPost marks a POST that may be repeated after a dropped
	// connection (an upload, sent with an Idempotency-Key: the server
	// answers a repeat with the first answer instead of a second report).
	retryPost bool
	// idemKey is sent as Idempotency-Key when set.
	idemKey string
}

// errFinal marks an error that retrying cannot fix (a file that failed to
// open, a body that cannot be produced twice).
type errFinal struct{ error }

func (e errFinal) Unwrap() error { return e.error }

// do runs c with retries: transport errors and server errors of a retryable
// kind are repeated with exponential backoff and jitter (retry.go); anything
// else is returned at once. A stream's response body is the caller's to close.
func (c *Client) do(ctx context.Context, cl call) (*resty.Response, error) {
	attempts := c.opts.Retries + 1
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, cl)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var fin errFinal
		if errors.As(err, &fin) {
			return nil, fin.error
		}
		var apiErr *report.Error
		isAPI := errors.As(err, &apiErr)
		if isAPI && apiErr.Kind == report.Unauthorized {
			return nil, c.tokenHint(apiErr)
		}
		var later inFlight
		if isAPI && !retryable(apiErr.Kind) && !errors.As(err, &later) {
			return nil, apiErr
		}
		if why := permanentFailure(err); why != "" && !isAPI {
			return nil, &UnreachableError{Server: c.site, Attempts: attempt, Err: err, Permanent: why}
		}
		if !safeToRepeat(cl, err) {
			// Not "unreachable": the request may well have arrived.
			return nil, fmt.Errorf("%s %s: %w (not repeated: the server may have acted on it before the connection failed)", cl.method, cl.path, err)
		}
		if attempt >= attempts {
			if isAPI {
				return nil, apiErr
			}
			return nil, &UnreachableError{Server: c.site, Attempts: attempt, Err: err}
		}
		wait := c.waitFor(attempt-1, err)
		if c.opts.OnRetry != nil {
			c.opts.OnRetry(Retry{Attempt: attempt + 1, Attempts: attempts, Wait: wait, Err: err})
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// tokenHint adds to a 401, which no retry fixes, how to give a token:
// the usual way a client meets it is a server that has just got its first
// token, and then what to do is the whole point of the message.
func (c *Client) tokenHint(e *report.Error) *report.Error {
	hint := "no token was sent, and this server now requires one: pass it with --token, REPORTCTL_TOKEN or token: in reportctl's config file; " +
		"an administrator makes one with reportd token create"
	if c.opts.Token != "" {
		hint = "the token sent (--token, REPORTCTL_TOKEN or the config file) was refused: pass a valid one"
	}
	return &report.Error{Kind: e.Kind, Message: e.Message + " - " + hint, Err: e.Err}
}

// attempt sends the request once. The overall timeout covers the whole
// exchange for JSON calls, and only the wait for headers for streams.
func (c *Client) attempt(parent context.Context, cl call) (*resty.Response, error) {
	ctx, cancel := context.WithCancel(parent)
	var timer *time.Timer
	if c.opts.Timeout > 0 {
		timer = time.AfterFunc(c.opts.Timeout, cancel)
	}
	done := func() {
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}

	req := c.http.R().SetContext(ctx).SetDoNotParseResponse(cl.stream)
	if cl.query != nil {
		req.SetQueryParamsFromValues(cl.query)
	}
	if cl.json != nil {
		req.SetHeader("Content-Type", "application/json").SetBody(cl.json)
	}
	if cl.idemKey != "" {
		req.SetHeader("Idempotency-Key", cl.idemKey)
	}
	var body io.ReadCloser
	if cl.body != nil {
		r, ctype, err := cl.body()
		if err != nil {
			done()
			return nil, errFinal{err}
		}
		body = r
		// The pre-request hook (client.go) swaps the real body in.
		req.SetContext(context.WithValue(ctx, streamedBody{}, r)).
			SetHeader("Content-Type", ctype).SetBody(http.NoBody)
	}
	resp, err := req.Execute(cl.method, cl.path)
	if body != nil {
		// The transport normally closes it; closing again stops the
		// producer goroutine on every path, including early failures.
		body.Close()
	}
	if err != nil {
		done()
		if resp != nil && resp.RawBody() != nil {
			resp.RawBody().Close()
		}
		if p, ok := body.(producer); ok && p.producerErr() != nil {
			return nil, errFinal{p.producerErr()}
		}
		return nil, err
	}

	if cl.stream {
		if timer != nil {
			timer.Stop() // headers are in: let the body take as long as it needs
		}
		raw := resp.RawBody()
		if resp.StatusCode() >= 300 {
			b, _ := io.ReadAll(io.LimitReader(raw, 1<<20))
			raw.Close()
			cancel()
			return nil, withRetryAfter(decodeError(resp.StatusCode(), b), resp.Header())
		}
		resp.RawResponse.Body = &cancelOnClose{ReadCloser: raw, cancel: cancel}
		return resp, nil
	}
	defer done()
	if resp.StatusCode() >= 300 {
		apiErr := decodeError(resp.StatusCode(), resp.Body())
		if apiErr.Kind == report.Conflict && resp.Header().Get("Retry-After") != "" {
			return nil, inFlight{apiErr} // the first upload under the key is still being stored
		}
		return nil, withRetryAfter(apiErr, resp.Header())
	}
	if cl.out != nil {
		if err := json.Unmarshal(resp.Body(), cl.out); err != nil {
			return nil, errFinal{fmt.Errorf("%s %s: unexpected response body: %w", cl.method, cl.path, err)}
		}
	}
	return resp, nil
}

// inFlight is a ConflictError with Retry-After: the request's
// Idempotency-Key is held by an earlier attempt the server is still
// storing; asking again later gets that attempt's answer.
type inFlight struct{ err *report.Error }

func (e inFlight) Error() string { return e.err.Error() }
func (e inFlight) Unwrap() error { return e.err }

// producer is a streamed body that knows whether producing it failed (the
// local file could not be read), which no retry can fix.
type producer interface{ producerErr() error }

// cancelOnClose releases a stream's attempt context when the caller is done.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
