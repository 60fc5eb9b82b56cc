package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/report"
)

const (
	// streamAbove: a text up to this size goes the fast way, read whole and
	// sent with a Content-Length; a larger one is escaped into the response
	// as it is read, so memory stays at a few buffers whatever its size (a
	// text of control bytes grows six-fold as \u0001 escapes).
	streamAbove = 256 << 10
	streamChunk = 32 << 10
)

// getReport answers GET /api/reports/{id}.
func (s *Server) getReport(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rep, f, size, err := s.svc.ReportDetail(r.Context(), id)
	if err != nil {
		return err
	}
	s.withReportLinks(r, &rep)
	if f == nil {
		writeJSON(w, http.StatusOK, rep)
		return nil
	}
	defer f.Close()
	if size <= streamAbove {
		var b strings.Builder
		b.Grow(int(size))
		if _, err := io.Copy(&b, f); err != nil {
			return report.Wrap(report.Storage, err, "cannot read the report's file")
		}
		text := b.String()
		rep.FileContent = &text
		writeJSON(w, http.StatusOK, rep)
		return nil
	}
	s.streamReport(w, r, &rep, f)
	return nil
}

// streamReport writes the detail with fileContent escaped chunk by chunk,
// byte for byte what writeJSON would send (without a Content-Length). A
// read error after the status has gone out aborts the response, so the
// client sees a broken body rather than a short one that parses.
func (s *Server) streamReport(w http.ResponseWriter, r *http.Request, rep *report.Report, f io.Reader) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	out := append(appendReportHead(make([]byte, 0, 6*streamChunk+256), rep), '"')
	in := make([]byte, streamChunk+utf8.UTFMax)
	carry := 0
	for {
		n, err := io.ReadFull(f, in[carry:carry+streamChunk])
		end := carry + n
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			s.log.LogAttrs(r.Context(), slog.LevelError, "report detail cut off",
				slog.String("id", requestID(r.Context())), slog.String("err", err.Error()))
			panic(http.ErrAbortHandler)
		}
		cut := end
		if !eof {
			cut = completeRunes(in[:end])
		}
		out = appendJSONEscaped(out, string(in[:cut]))
		if eof {
			break
		}
		if _, err := w.Write(out); err != nil {
			return // the client went away (or a HEAD request)
		}
		out = out[:0]
		carry = copy(in, in[cut:end])
	}
	out = append(appendReportTail(append(out, '"'), rep), '\n')
	w.Write(out)
}

// completeRunes is the length of p's prefix that does not end inside a
// UTF-8 sequence that the next chunk may complete. Invalid bytes count as
// complete: they become \ufffd either way.
func completeRunes(p []byte) int {
	i := len(p) - 1
	for i >= 0 && i > len(p)-utf8.UTFMax && !utf8.RuneStart(p[i]) {
		i--
	}
	if i < 0 || utf8.FullRune(p[i:]) {
		return len(p)
	}
	return i
}
