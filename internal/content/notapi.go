package content

import (
	"encoding/json"
	"net/http"
	"strings"
)

// notTheAPI answers an API request sent to the content origin (a client
// whose --server names the content origin instead of the API) with the
// API's error body, saying what this is and where the API is, instead of
// a bare 404 the client can only call "HTTP 404". A per-report origin's
// own files below /api/ (a site may have them) are served as usual.
func (h *Handler) notTheAPI(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if p != "/api" && !strings.HasPrefix(p, "/api/") {
		return false
	}
	if _, _, _, ok := h.o.Resolve(r.Host, p); ok {
		return false
	}
	where := "the API listener (addr), not the content origin (content.addr)"
	if api := strings.TrimRight(h.cfg.APIURL, "/"); api != "" {
		where = api + " (its API below " + api + "/api)"
	}
	msg := "NotFoundError: this is reportd's content origin, which serves report sites only, not the API; " +
		"point clients (reportctl --server, REPORTCTL_SERVER) at " + where
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
		Type  string `json:"type"`
	}{msg, "NotFoundError"})
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		w.Write(append(b, '\n'))
	}
	return true
}
