package httpapi

import (
	"net/http"
	"strconv"
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
	_, b, err := s.svc.MarkdownHTML(r.Context(), id)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", renderedCSP)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
	return nil
}
