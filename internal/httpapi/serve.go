package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/netguard"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// sandbox confines uploaded documents: they never run script with the
// daemon's origin. PDFs are exempt because browsers refuse to show a PDF
// under a sandbox policy, and a PDF cannot reach the origin anyway.
func (s *Server) sandbox(h http.Header, contentType string) {
	if strings.HasPrefix(contentType, "application/pdf") {
		return
	}
	csp := "sandbox"
	if s.cfg.HTMLAllowScripts {
		csp += " allow-scripts"
	}
	h.Set("Content-Security-Policy", csp)
}

// serveObject serves a stored object with serveFile. The local store's
// objects are *os.File underneath, handed to ServeContent as such so the
// body still goes out with sendfile; any other store's object is read (and
// range-seeked) as it is.
func (s *Server) serveObject(w http.ResponseWriter, r *http.Request, o blob.Object, contentType, disposition, etag string) {
	var content io.ReadSeeker = o
	if f, ok := blob.OSFile(o); ok {
		content = f
	}
	info := o.Info()
	s.serveFile(w, r, content, info.ModTime, info.Size, contentType, disposition, etag)
}

// serveFile answers with the content's size bytes, with range requests,
// ETag and Last-Modified from http.ServeContent.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, content io.ReadSeeker, modTime time.Time, size int64, contentType, disposition, etag string) {
	netguard.FileBody(r.Context()) // bounded by download_min_rate, not write_timeout
	h := w.Header()
	h.Set("Content-Type", contentType)
	if disposition != "" {
		h.Set("Content-Disposition", disposition)
	}
	if etag != "" {
		h.Set("ETag", `"`+etag+`"`)
	}
	h.Set("Cache-Control", "no-cache")
	s.sandbox(h, contentType)
	g := &rangeGuard{ResponseWriter: w}
	http.ServeContent(g, r, "", modTime, content)
	if g.refused {
		s.writeError(w, r, report.Errorf(report.Validation, "Range %q cannot be satisfied for a %d-byte file", r.Header.Get("Range"), size))
	}
}

// rangeGuard holds back the plain-text 416 that http.ServeContent writes
// for a bad Range, so the client gets the API's error body instead. It
// keeps ReadFrom, so file bodies still go out with sendfile.
type rangeGuard struct {
	http.ResponseWriter
	refused bool
}

func (g *rangeGuard) WriteHeader(code int) {
	if code == http.StatusRequestedRangeNotSatisfiable {
		g.refused = true
		return
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *rangeGuard) Write(b []byte) (int, error) {
	if g.refused {
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

func (g *rangeGuard) ReadFrom(src io.Reader) (int64, error) {
	if rf, ok := g.ResponseWriter.(io.ReaderFrom); ok && !g.refused {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{g}, src)
}

// writerOnly hides ReadFrom so io.Copy does not recurse into it.
type writerOnly struct{ io.Writer }

// etagOf names the representation: the content and the file type, since a
// PUT that changes only fileType changes the preview's Content-Type and the
// PDF engine (html and md print differently), and a client revalidating with
// the old tag must not get 304 for bytes that are no longer served.
func etagOf(rec report.ReportRecord) string {
	sum := rec.SHA256
	if len(sum) >= 32 {
		sum = sum[:32]
	}
	return sum + "-" + string(rec.FileType)
}

// pdfETag names one printed variant of rec. gen is the engines' generation
// (service.Converter.Generation): a PDF printed by the engines changes when
// they print differently (a re-render after an isolation fix, a new
// stylesheet), and a client holding the old tag must then get the new bytes,
// never 304 nor, through If-Range, a range spliced from two renders. A PDF
// report served as stored does not depend on the engines.
func pdfETag(rec report.ReportRecord, opts report.PrintOptions, gen string) string {
	tag := "pdf-" + etagOf(rec)
	if rec.FileType.Info().Engine != report.EnginePassthroughPDF || !opts.IsZero() {
		if gen != "" {
			tag += "-g" + gen
		}
	}
	if opts.IsZero() {
		return tag
	}
	h := sha256.Sum256([]byte(opts.Key()))
	return tag + "-" + hex.EncodeToString(h[:8])
}

// original serves a report's stored file, with the Content-Disposition
// that disposition gives for it (inline for preview, attachment for download).
//
// A site has no one stored file: its preview redirects to the content
// origin and its download is a zip of its files (sites.go).
func (s *Server) original(disposition func(report.ReportRecord) string) func(http.ResponseWriter, *http.Request) error {
	download := disposition == nil
	if download {
		disposition = attachment
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if download && s.cfg.PresignDownload != nil {
			if done, err := s.presigned(w, r, id); done || err != nil {
				return err
			}
		}
		rec, o, err := s.svc.OpenReport(r.Context(), id)
		if err != nil {
			if rec.IsSite() {
				return s.siteOriginal(w, r, rec, download)
			}
			return err
		}
		defer o.Close()
		s.serveObject(w, r, o, rec.FileType.ContentType(), disposition(rec), etagOf(rec))
		return nil
	}
}

// presigned answers a download with a 302 to the URL Config.PresignDownload
// gives, for a report that is neither html nor a site; done false: the
// caller serves it as usual. The Location is a short capability (anyone
// holding it can fetch the object until it expires): never cached.
func (s *Server) presigned(w http.ResponseWriter, r *http.Request, id int64) (done bool, err error) {
	rec, err := s.svc.ReportRecord(r.Context(), id)
	if err != nil {
		return false, err
	}
	if rec.IsSite() || rec.FileType == report.HTML {
		return false, nil
	}
	loc, ok, err := s.cfg.PresignDownload(r.Context(), rec, attachment(rec), rec.FileType.ContentType())
	if err != nil || !ok {
		return false, err
	}
	h := w.Header()
	h.Set("Location", loc)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
	return true, nil
}

func inline(report.ReportRecord) string { return "inline" }

func attachment(rec report.ReportRecord) string {
	return ContentDisposition("attachment", rec.FileName)
}

func (s *Server) pdf(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil { // r.URL.Query() would drop the bad pair, and an option with it
		return report.Wrap(report.Validation, err, "the query string is malformed")
	}
	opts, err := report.ParsePrintOptions(q)
	if err != nil {
		return err
	}
	if opts.WaitForExpression != "" {
		if r, err = s.permit(r, access[scriptedPDF]); err != nil {
			return err
		}
	}
	rec, o, err := s.svc.PDF(r.Context(), id, opts)
	if err != nil {
		return err
	}
	defer o.Close()
	name := strings.TrimSuffix(rec.FileName, path.Ext(rec.FileName)) + ".pdf"
	s.serveObject(w, r, o, "application/pdf", ContentDisposition("inline", name), pdfETag(rec, opts, s.svc.PDFGeneration()))
	return nil
}

// staticTypes are the Content-Types of the images a data directory holds;
// a report file's comes from the type table (staticType).
var staticTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
}

// static serves /uploads/... from the data directory, confined to it:
// no traversal, no symlink escape, no directory listing.
//
// Site files are not served here: a site's paths redirect to the content
// origin, and the content objects (cas/) and manifests are the store's.
func (s *Server) static(w http.ResponseWriter, r *http.Request) error {
	switch {
	case strings.HasPrefix(r.URL.Path, report.SitesPrefix):
		return s.staticSite(w, r)
	case strings.HasPrefix(r.URL.Path, files.UploadsPrefix+site.ObjectPrefix):
		return report.Errorf(report.NotFound, "file not found: %s", r.URL.Path)
	}
	o, err := s.svc.OpenStatic(r.URL.Path)
	if err != nil {
		return report.Errorf(report.NotFound, "file not found: %s", r.URL.Path)
	}
	defer o.Close()
	s.serveObject(w, r, o, staticType(o.Info().Key), "", "")
	return nil
}

// staticType is the Content-Type of a stored file by its extension.
func staticType(key string) string {
	if t, ok := report.TypeOfName(key); ok {
		return t.ContentType()
	}
	if ct, ok := staticTypes[strings.ToLower(path.Ext(key))]; ok {
		return ct
	}
	return "application/octet-stream"
}
