package httpapi

import (
	"net/http"
	"strconv"

	"github.com/reportd/reportd/internal/report"
)

// renderedCSP confines the rendered Markdown: an opaque-origin sandbox
// without scripts, forms or plugins, and nothing loaded from anywhere but
// the document itself (its stylesheet and highlighting are inline; images
// may be data: URLs, as in the PDF, which loads nothing from the network).
const renderedCSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// markdownHTML answers GET /api/reports/{id}/html: a Markdown report
// rendered by the server, the same HTML and stylesheet its PDF prints, for
// the dashboard's sandboxed frame.
func (s *Server) markdownHTML(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	// The rendering follows the stored bytes and the engines' generation:
	// a client that has it (the dashboard's frame, right after the reader
	// fetched it) gets a 304 without a second render.
	etag := func(rec report.ReportRecord) string {
		return `"html-` + etagOf(rec) + "-g" + s.svc.PDFGeneration() + `"`
	}
	inm := r.Header.Get("If-None-Match")
	rec, b, err := s.svc.MarkdownHTML(r.Context(), id, func(rec report.ReportRecord) bool {
		return inm != "" && matchesETag(inm, etag(rec))
	})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("ETag", etag(rec))
	h.Set("Cache-Control", "no-cache")
	if b == nil {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", renderedCSP)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
	return nil
}
