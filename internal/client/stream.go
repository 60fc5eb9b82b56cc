package client

import (
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Stream is a file coming from the server. The caller must Close it.
type Stream struct {
	io.ReadCloser
	// FileName is the name from Content-Disposition, reduced to a safe base
	// name; empty when the server sent none.
	FileName    string
	ContentType string
	// Size is the Content-Length, or -1 when unknown.
	Size int64
}

// Preview fetches the report for inline display.
func (c *Client) Preview(ctx context.Context, id int64) (*Stream, error) {
	return c.stream(ctx, "/reports/"+itoa(id)+"/preview")
}

// Download fetches the original file.
func (c *Client) Download(ctx context.Context, id int64) (*Stream, error) {
	return c.stream(ctx, "/reports/"+itoa(id)+"/download")
}

// PDF fetches the report converted to PDF.
func (c *Client) PDF(ctx context.Context, id int64) (*Stream, error) {
	return c.PrintPDF(ctx, id, report.PrintOptions{})
}

// PrintPDF fetches the report converted to PDF with print options; the
// zero options ask for the default print, as PDF does.
func (c *Client) PrintPDF(ctx context.Context, id int64, opts report.PrintOptions) (*Stream, error) {
	q, err := url.ParseQuery(opts.Key())
	if err != nil {
		return nil, err
	}
	return c.stream(ctx, "/reports/"+itoa(id)+"/pdf", q)
}

func (c *Client) stream(ctx context.Context, p string, query ...url.Values) (*Stream, error) {
	cl := call{method: http.MethodGet, path: p, stream: true}
	if len(query) > 0 && len(query[0]) > 0 {
		cl.query = query[0]
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	h := resp.Header()
	size := int64(-1)
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil {
		size = n
	}
	return &Stream{
		ReadCloser:  resp.RawBody(),
		FileName:    DispositionFileName(h.Get("Content-Disposition")),
		ContentType: h.Get("Content-Type"),
		Size:        size,
	}, nil
}

// DispositionFileName extracts the file name of a Content-Disposition
// header (filename* per RFC 5987 wins over filename) and strips anything
// that could escape the current directory. It returns "" when there is no
// usable name.
func DispositionFileName(header string) string {
	if header == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(header)
	if err != nil {
		return ""
	}
	return SafeFileName(params["filename"])
}

// SafeFileName reduces a server-supplied name to a plain base name.
func SafeFileName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "." || name == ".." || name == "/" || name == "" || filepath.Base(name) != name {
		return ""
	}
	return name
}

// imageType guesses a cover's part Content-Type from its name; the daemon
// detects the real type from the content anyway.
func imageType(name string) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); strings.HasPrefix(t, "image/") {
		return t
	}
	return "application/octet-stream"
}
