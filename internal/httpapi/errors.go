package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// StatusMode picks how error kinds map to HTTP statuses.
type StatusMode string

const (
	// StatusSpec answers every error with 500, as api-spec.md §7 says.
	StatusSpec StatusMode = "spec"
	// StatusConventional uses 400/401/403/404/405/408/409/413/421/502/503 for monitoring that counts 5xx.
	StatusConventional StatusMode = "conventional"
)

var conventional = map[report.Kind]int{
	report.NotFound:         http.StatusNotFound,
	report.Validation:       http.StatusBadRequest,
	report.PayloadTooLarge:  http.StatusRequestEntityTooLarge,
	report.Unauthorized:     http.StatusUnauthorized,
	report.Forbidden:        http.StatusForbidden,
	report.MethodNotAllowed: http.StatusMethodNotAllowed,
	report.Conflict:         http.StatusConflict,
	report.Conversion:       http.StatusBadGateway,
	report.Unavailable:      http.StatusServiceUnavailable,
}

// retryAfter is the Retry-After (seconds) of a 503: an outage of the
// database or bucket, a full conversion queue. Short: clients back off
// on their own (reportctl doubles its wait), and a replica that recovered
// should get its traffic back soon.
const retryAfter = "5"

// ErrorBody is the spec's error object.
type ErrorBody struct {
	Error string `json:"error"`
	Type  string `json:"type"`
}

// WriteError is writeError for handlers outside the API (the daemon's
// admin routes), so that they answer the same {error,type} body.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, err)
}

// writeError is the one place error kinds become HTTP. The client sees the
// kind and its message; wrapped internal detail goes to the log only.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if k := report.KindOf(err); k == report.Storage || k == report.Internal {
		if out := report.Outage(err); out != nil {
			err = out // the database or bucket is down: say so, not "storage failed"
		}
	}
	kind := report.KindOf(err)
	noteError(r.Context(), kind)
	status := http.StatusInternalServerError
	hint := ""
	if s.cfg.ErrorStatus == StatusConventional || isStableLink(r) {
		if c, ok := conventional[kind]; ok {
			status = c
		}
		var ws withStatus
		if errors.As(err, &ws) {
			status = ws.status
		}
	} else if c, ok := conventional[kind]; ok {
		// Spec mode: say why a missing report is a 500, and what to change.
		hint = report.SpecStatusHint(c)
	}
	var fs fixedStatus
	if errors.As(err, &fs) {
		status = fs.status
	}
	var e *report.Error
	if !errors.As(err, &e) || e.Err != nil || kind == report.Internal || kind == report.Storage {
		s.log.LogAttrs(r.Context(), logLevel(kind), "request error",
			slog.String("id", requestID(r.Context())), slog.String("type", string(kind)), slog.String("err", err.Error()))
	}
	switch kind {
	case report.Unauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="reportd"`)
	case report.Forbidden: // RFC 6750 §3.1
		if isCrossOrigin(err) {
			break
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="reportd", error="insufficient_scope"`)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	// Headers for a file that was about to be served must not leak into the error.
	for _, h := range []string{"Content-Disposition", "Content-Security-Policy", "Etag", "Last-Modified", "Content-Encoding", "Content-Length"} {
		w.Header().Del(h)
	}
	writeJSON(w, status, ErrorBody{Error: string(kind) + ": " + report.MessageOf(err) + hint, Type: string(kind)})
}

// isStableLink says r is a stable link or badge (/p/...): not part of the
// seed API, so its errors have conventional statuses in every mode.
func isStableLink(r *http.Request) bool {
	return r.URL.Path == "/p" || strings.HasPrefix(r.URL.Path, "/p/")
}

func logLevel(k report.Kind) slog.Level {
	if k == report.Internal || k == report.Storage {
		return slog.LevelError
	}
	if k == report.Unavailable {
		return slog.LevelWarn // an outage, a full queue: passes, but worth seeing
	}
	return slog.LevelInfo
}
