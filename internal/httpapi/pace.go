package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Pace bounds how slowly a client may send a request body. Without it one
// client dribbling a byte every few seconds holds a connection, a staging
// file and a handler for as long as it likes.
type Pace struct {
	// MinRate is the average rate, in bytes per second, that a body must
	// keep up once Grace has passed (0: no minimum).
	MinRate int64
	// Grace is how long a body may lag behind MinRate (TCP slow start, a
	// client's disk warming up); also the slack a client at exactly
	// MinRate keeps.
	Grace time.Duration
	// Idle is the longest wait for the next bytes (0: no limit).
	Idle time.Duration
}

func (p Pace) off() bool { return p.MinRate <= 0 && p.Idle <= 0 }

// pacedBody moves the connection's read deadline forward as bytes arrive:
// to the earlier of now+Idle and the moment the average rate since the
// body began would fall below MinRate after Grace.
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	pace  Pace
	start time.Time
	n     int64
	err   error
}

// paced wraps r.Body; a writer that cannot set deadlines leaves it as is.
func paced(w http.ResponseWriter, r *http.Request, p Pace) {
	if p.off() || r.Body == nil || r.Body == http.NoBody {
		return
	}
	b := &pacedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), pace: p, start: time.Now()}
	if b.extend(b.start) != nil {
		return // e.g. an httptest.ResponseRecorder
	}
	r.Body = b
}

func (b *pacedBody) extend(now time.Time) error {
	var d time.Time
	if b.pace.Idle > 0 {
		d = now.Add(b.pace.Idle)
	}
	if b.pace.MinRate > 0 {
		due := b.start.Add(b.pace.Grace + time.Duration(float64(b.n)/float64(b.pace.MinRate)*float64(time.Second)))
		if d.IsZero() || due.Before(d) {
			d = due
		}
	}
	return b.rc.SetReadDeadline(d)
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		b.err = withStatus{report.Errorf(report.Validation,
			"the request body arrived too slowly (%d bytes in %s; the minimum is %d bytes/s after %s, with at most %s between reads)",
			b.n, time.Since(b.start).Round(time.Second), b.pace.MinRate, b.pace.Grace, b.pace.Idle), http.StatusRequestTimeout}
		return n, b.err
	}
	switch {
	case err == io.EOF:
		// The whole body is in. net/http now reads the connection in the
		// background (to notice a client that goes away) while the handler
		// stores the upload; a deadline there would cancel the request's
		// context in the middle of a slow commit.
		b.rc.SetReadDeadline(time.Time{})
	case n > 0 && err == nil:
		b.extend(time.Now())
	}
	return n, err
}

// withStatus gives an error a conventional-mode status of its own (spec
// mode answers 500 for every error as always).
type withStatus struct {
	error
	status int
}

func (e withStatus) Unwrap() error { return e.error }
