package content

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/netguard"
	"github.com/reportd/reportd/internal/site"
)

// serveFile sends f of report id's site v (or its precompressed variant the client prefers)
// with status: 200 through http.ServeContent (ranges, conditional
// requests, HEAD), 404 for a site's 404.html. Small objects are served
// from memory (objectCache) with the same headers.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, id int64, v site.View, f site.File, status int) {
	netguard.FileBody(r.Context()) // bounded by download_min_rate, not write_timeout
	hd := w.Header()
	hd["Content-Type"] = contentType(f.ContentType)
	open, etag := f, f.SHA256
	if site.Wants(f) {
		hd["Vary"] = varyEncodingV
		// A range is of the identity bytes: byte offsets into a compressed
		// copy are not what a client resuming a download or seeking a
		// video means.
		if accept := r.Header.Values("Accept-Encoding"); r.Header.Get("Range") == "" && len(accept) > 0 {
			if v := h.variants.get(r.Context(), id, f); v.Any() {
				if enc := negotiate(accept, v); enc != "" {
					open = f
					open.Encoding, open.Size = enc, v.Size(enc)
					etag = f.SHA256 + "." + enc
				}
			}
		}
	}
	if c := h.objects.getFile(open); c != nil {
		h.sendCached(w, r, open, c, status)
		return
	}
	obj, err := v.OpenFile(r.Context(), open)
	if err != nil && open.Encoding != "" {
		// The variant went (GC of a deleted original's copies races a
		// cached answer): the identity bytes.
		h.variants.forget(f.SHA256)
		open, etag = f, f.SHA256
		if c := h.objects.getFile(open); c != nil {
			h.sendCached(w, r, open, c, status)
			return
		}
		obj, err = v.OpenFile(r.Context(), open)
	}
	if err != nil {
		h.cfg.Log.Error("content origin: cannot open a site file", "id", id, "path", f.Path, "err", err)
		page(w, r, http.StatusServiceUnavailable, "Report unavailable", "A file of this report cannot be read right now; try again later.")
		return
	}
	defer obj.Close()
	if size := obj.Info().Size; size == open.Size && h.objects.fits(size) {
		body := make([]byte, size)
		if _, err := io.ReadFull(obj, body); err != nil {
			h.cfg.Log.Error("content origin: cannot read a site file", "id", id, "path", f.Path, "err", err)
			page(w, r, http.StatusServiceUnavailable, "Report unavailable", "A file of this report cannot be read right now; try again later.")
			return
		}
		h.sendCached(w, r, open, h.objects.put(open.Key(), etag, body), status)
		return
	}
	if open.Encoding != "" {
		hd.Set("Content-Encoding", open.Encoding)
		// ServeContent leaves the length out of encoded responses (it
		// cannot know it for a handler compressing on the fly); here it is
		// the variant's.
		hd.Set("Content-Length", strconv.FormatInt(open.Size, 10))
	}
	hd.Set("ETag", `"`+etag+`"`)
	if status != http.StatusOK {
		hd.Set("Cache-Control", "no-store")
		hd.Set("Content-Length", strconv.FormatInt(open.Size, 10))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			io.Copy(w, obj)
		}
		return
	}
	hd["Cache-Control"] = h.cacheControl()
	http.ServeContent(w, r, "", time.Time{}, obj)
}

func (h *Handler) cacheControl() []string {
	if h.cfg.Protected() {
		return immutablePrivV
	}
	return immutableV
}

// sendCached answers what serveFile would from the object's bytes in
// memory: a plain GET or HEAD (no Range, no conditions) directly with
// header values made once, anything else through http.ServeContent over
// the bytes.
func (h *Handler) sendCached(w http.ResponseWriter, r *http.Request, f site.File, c *cachedObject, status int) {
	hd := w.Header()
	if f.Encoding != "" {
		hd.Set("Content-Encoding", f.Encoding)
		hd["Content-Length"] = c.length
	}
	hd["Etag"] = c.etag
	if status != http.StatusOK {
		hd["Cache-Control"] = noStoreV
		hd["Content-Length"] = c.length
		netguard.Gather(r)
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(c.body)
		}
		return
	}
	hd["Cache-Control"] = h.cacheControl()
	if plainGet(r.Header) {
		hd["Accept-Ranges"] = acceptRangesV
		hd["Content-Length"] = c.length
		netguard.Gather(r) // header and body in one write
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(c.body)
		}
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(c.body))
}

// plainGet tells whether a request has none of the headers that make
// http.ServeContent answer anything but the whole body with 200: a
// range or a condition.
func plainGet(h http.Header) bool {
	return len(h["Range"]) == 0 && len(h["If-Match"]) == 0 && len(h["If-None-Match"]) == 0 &&
		len(h["If-Modified-Since"]) == 0 && len(h["If-Unmodified-Since"]) == 0 && len(h["If-Range"]) == 0
}

// negotiate picks the content coding from Accept-Encoding: the highest
// q-value among the variants v has (site.Encoders) and identity; on a tie
// the later row of site.Encoders (br, then gzip), then identity (identity
// is preferred only where it has a higher q-value than the variant). "" is
// identity (also when the client refuses it and nothing else fits: a body
// it may not decode beats a 406 here).
func negotiate(accept []string, v site.Variants) string {
	q := map[string]float64{}
	for _, line := range accept {
		for part := range strings.SplitSeq(line, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding == "" {
				continue
			}
			v := 1.0
			for p := range strings.SplitSeq(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
					if err != nil || f < 0 || f > 1 {
						f = 0
					}
					v = f
				}
			}
			if old, seen := q[coding]; !seen || v > old {
				q[coding] = v
			}
		}
	}
	weight := func(c string, dflt float64) float64 {
		if v, ok := q[c]; ok {
			return v
		}
		if v, ok := q["*"]; ok {
			return v
		}
		return dflt
	}
	// identity is acceptable unless excluded, but only preferred where the
	// client says so: at the same or no q-value a variant wins.
	best, bestQ := "", weight("identity", 0)
	for _, e := range site.Encoders {
		if v.Size(e.Name) <= 0 {
			continue
		}
		if w := weight(e.Name, 0); w > 0 && w >= bestQ {
			best, bestQ = e.Name, w
		}
	}
	return best
}

// listing answers the generated file list of a site without an entry page.
func listing(w http.ResponseWriter, r *http.Request, m site.Manifest) {
	b := site.Listing(m)
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

// page answers a small HTML page: the content origin's errors are seen in
// a browser tab or the dashboard's frame, not by API clients.
func page(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	hd := w.Header()
	hd.Del("ETag")
	hd.Del("Content-Encoding")
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	b := fmt.Sprintf("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%d %s</title></head>\n"+
		"<body style=\"font-family:sans-serif;margin:2em\"><h1>%s</h1>\n<p>%s</p>\n<p><small>reportd content origin</small></p></body></html>\n",
		status, html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg))
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, b)
	}
}
