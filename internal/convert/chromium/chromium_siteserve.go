package chromium

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// siteMaxFileBytes bounds one file answered to a site's page: the protocol
// carries a response body whole, base64 in one message.
const siteMaxFileBytes = 64 << 20

// siteAnswers bounds the files of one site job read and answered at once:
// each is held whole (siteMaxFileBytes at most), so a page that asks for
// its largest file hundreds of times at once must not hold them all.
const siteAnswers = 8

// siteServe answers a site job's requests from its files, under the job's
// origin alone. It counts requests in flight, for the network-quiet wait.
type siteServe struct {
	origin string    // https://r<random>.reportd.invalid
	files  SiteFiles //
	ctx    context.Context
	allow  bool          // Config.AllowNetwork: other http(s) requests go out, as for single-file reports
	slots  chan struct{} // siteAnswers

	inflight atomic.Int64
	started  atomic.Int64 // requests asked, ever
	last     atomic.Int64 // unix nanoseconds of the last request's end

	mu      sync.Mutex
	status  map[string]int // status of each document (page) answered, by site path
	readErr error          // the first failure to read a file that is there (a store or bucket fault)
}

// failed returns the first fault reading the site's files (not a missing
// file: a storage or bucket error), as a *report.Error: the job then fails
// with it instead of printing a page without its files, and, not being a
// ConversionError, it is never remembered as the report's failure.
func (s *siteServe) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr == nil {
		return nil
	}
	var re *report.Error
	if errors.As(s.readErr, &re) && re.Kind != report.Conversion {
		return s.readErr
	}
	return engine.DiskErr(s.readErr, "cannot read the site's files")
}

func (s *siteServe) noteReadErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr == nil && s.ctx.Err() == nil {
		s.readErr = err
	}
}

func newSiteServe(ctx context.Context, files SiteFiles, allow bool) *siteServe {
	var b [8]byte
	rand.Read(b[:])
	s := &siteServe{origin: "https://r" + hex.EncodeToString(b[:]) + "." + docHost,
		files: files, ctx: ctx, allow: allow, slots: make(chan struct{}, siteAnswers), status: map[string]int{}}
	s.last.Store(time.Now().UnixNano())
	return s
}

// url is the address of the site's file at p (relative to the root).
func (s *siteServe) url(p string) string {
	return s.origin + (&url.URL{Path: "/" + p}).EscapedPath()
}

// pathOf returns the site path that u names, and whether u is on the origin.
func (s *siteServe) pathOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme+"://"+u.Host, s.origin) {
		return "", false
	}
	return sitePath(u.Path), true
}

// docStatus is the status the page at site path p was last answered with
// (0: never asked).
func (s *siteServe) docStatus(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status[p]
}

// answer serves one paused request of page ctx.
func (s *siteServe) answer(ctx context.Context, e *fetch.EventRequestPaused) {
	s.started.Add(1)
	s.inflight.Add(1)
	defer func() {
		s.last.Store(time.Now().UnixNano())
		s.inflight.Add(-1)
	}()
	p, ours := s.pathOf(e.Request.URL)
	if !ours {
		outside(ctx, e, s.allow)
		return
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-s.ctx.Done():
		return // the job is over; its page goes with it
	}
	code, ct, body := s.read(p, e.Request.Method)
	if code == 0 {
		chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{
			RequestID: e.RequestID, ErrorReason: network.ErrorReasonFailed,
		})
		return
	}
	if e.ResourceType == network.ResourceTypeDocument {
		s.mu.Lock()
		s.status[p] = code
		s.mu.Unlock()
	}
	chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID:    e.RequestID,
		ResponseCode: int64(code),
		ResponseHeaders: []*fetch.HeaderEntry{
			{Name: "Content-Type", Value: ct},
			{Name: "Cache-Control", Value: "no-store"},
			{Name: "X-Content-Type-Options", Value: "nosniff"},
		},
		Body: body,
	})
}

// read answers GET and HEAD of the site's file p: a status (0: fail the
// request), a content type and the body.
func (s *siteServe) read(p, method string) (int, string, []byte) {
	if method != "GET" && method != "HEAD" {
		return 405, "text/plain; charset=utf-8", []byte("method not allowed")
	}
	rc, ct, err := s.files(s.ctx, p)
	if err != nil {
		if missing(err) {
			return 404, "text/plain; charset=utf-8", []byte("not found")
		}
		s.noteReadErr(err)
		return 0, "", nil
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, siteMaxFileBytes+1))
	if err != nil {
		s.noteReadErr(err)
		return 0, "", nil
	}
	if len(body) > siteMaxFileBytes {
		return 0, "", nil
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	if ct == "text/html" && utf8.Valid(body) {
		ct += "; charset=utf-8" // as a single-file report's page is loaded (chromium_page.go)
	}
	if method == "HEAD" {
		body = nil
	}
	return 200, ct, body
}

// quiet waits until the page's network is quiet, or until end. since is
// the count of requests (started) when the page's load event had fired. A
// page that has asked for nothing since is quiet once nothing is in flight
// for short (its scripts have settled already: quiet.js); one that has is
// quiet once no request has been in flight for full, counted from the end
// of the last one: requests that quiet.js does not see (a worker's fetch,
// an image or script a late script inserts) are waited for too.
func (s *siteServe) quiet(ctx context.Context, since int64, short, full time.Duration, end time.Time) error {
	t0 := time.Now()
	for {
		window, idle := short, time.Since(t0)
		if s.started.Load() != since {
			window, idle = full, time.Since(time.Unix(0, s.last.Load()))
		}
		if s.inflight.Load() == 0 && idle >= window {
			return nil
		}
		if !time.Now().Before(end) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(20*time.Millisecond, time.Until(end))):
		}
	}
}
