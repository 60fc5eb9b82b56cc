package httpapi

import (
	"archive/zip"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/netguard"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
)

// siteParts collects the file parts of an upload: one (a single file or
// a site archive) or several (one site, each part staged in tmp/ as it
// arrives, within the site limits).
type siteParts struct {
	first    *files.Staged         // the first part, staged as any upload
	fileName string                // its base name
	parts    []service.SitePart    // every part, with the name as sent
	staged   []*service.StagedPart // the parts after the first
	bytes    int64                 // their bytes so far
	streamed *site.Staged          // the first part's site, read as it arrived
	// streamMiss says why a streamable first part was not read as it
	// arrived (service.SiteUpload.StreamMiss)
	streamMiss string
}

func (u *siteParts) discard() {
	u.first.Discard()
	for _, p := range u.staged {
		p.Discard()
	}
	u.streamed.Discard()
}

// rawFileName is a part's file name as the client sent it: relative
// paths kept (multipart.Part.FileName keeps only the base name).
func rawFileName(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return p.FileName()
	}
	return params["filename"]
}

// stageFilePart stages one file part of an upload.
// html tells whether fileType html came before the part: then a tar
// archive is read as a site while it arrives (streamFirst).
func (s *Server) stageFilePart(ctx context.Context, u *siteParts, part *multipart.Part, html bool) error {
	raw := rawFileName(part)
	if raw == "" {
		return report.Errorf(report.Validation, "the file part has no file name")
	}
	if u.first == nil {
		st, err := s.stageFirst(ctx, u, part, html)
		if err != nil {
			return multipartError(err)
		}
		u.first, u.fileName, u.bytes = st, part.FileName(), st.Size
		u.parts = append(u.parts, service.SitePart{Name: raw, Open: func() (io.ReadCloser, error) { return st.Open() }})
		return nil
	}
	u.streamed.Discard() // several parts: a site of parts, not an archive
	u.streamed = nil
	lim := s.svc.SiteLimits()
	if len(u.parts) >= lim.MaxEntries {
		return report.Errorf(report.PayloadTooLarge, "the site has more than %d entries", lim.MaxEntries)
	}
	p, err := s.svc.StagePart(part, max(lim.MaxBytes-u.bytes, 0))
	if err != nil {
		return multipartError(err)
	}
	u.staged = append(u.staged, p)
	u.bytes += p.Size
	u.parts = append(u.parts, service.SitePart{Name: raw, Open: p.Open})
	return nil
}

// noContentOrigin is the answer for a site when no content origin is configured.
func noContentOrigin(id int64) error {
	return report.Errorf(report.NotFound, "report %d: this report is a site; no content origin is configured", id)
}

// redirectToContent answers 302 to file of report id on the content origin.
func (s *Server) redirectToContent(w http.ResponseWriter, id int64, file string) error {
	if s.cfg.ContentURL == nil {
		return noContentOrigin(id)
	}
	h := w.Header()
	h.Set("Location", s.cfg.ContentURL(id, file))
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusFound)
	return nil
}

// siteOriginal answers preview (302 to the content origin) and download
// (a zip of the site) of a site report.
func (s *Server) siteOriginal(w http.ResponseWriter, r *http.Request, rec report.ReportRecord, download bool) error {
	if !download {
		return s.redirectToContent(w, rec.ID, rec.Entry)
	}
	_, v, err := s.svc.OpenSite(r.Context(), rec.ID)
	if err != nil {
		return err
	}
	return s.siteZip(w, r, rec, v)
}

// zipTime is every entry's time in a site's zip, so that the zip of one
// site is the same bytes every time (and its ETag holds).
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// stored are the types deflate cannot shrink: zipped as they are.
var stored = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true,
	".woff": true, ".woff2": true, ".zip": true, ".gz": true, ".br": true, ".webm": true, ".mp4": true, ".pdf": true}

// siteZip streams the site as a deterministic zip: the manifest's order
// (sorted by name), fixed times and methods, no length known up front.
// A failure once the body has begun cuts the connection, so a client
// never takes a truncated zip for a whole one.
func (s *Server) siteZip(w http.ResponseWriter, r *http.Request, rec report.ReportRecord, v site.View) error {
	m := v.Manifest
	etag := `"site-` + rec.SHA256 + `"`
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", ContentDisposition("attachment", service.SiteZipName(rec.FileName)))
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Accept-Ranges", "none")
	h.Set("Last-Modified", rec.UploadTime.UTC().Format(http.TimeFormat))
	if inm := r.Header.Get("If-None-Match"); inm != "" && matchesETag(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	// Open the first file before committing to 200, so a missing object
	// still gets the error body.
	var first io.ReadCloser
	if len(m.Files) > 0 {
		o, err := v.OpenFile(r.Context(), m.Files[0])
		if err != nil {
			return report.Wrap(report.Storage, err, "the site's files are missing")
		}
		first = o
	}
	if r.Method == http.MethodHead {
		if first != nil {
			first.Close()
		}
		w.WriteHeader(http.StatusOK)
		return nil
	}
	netguard.FileBody(r.Context()) // as long as the site is large: bounded by download_min_rate
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	for i, f := range m.Files {
		var src io.ReadCloser = first
		if i > 0 {
			o, err := v.OpenFile(r.Context(), f)
			if err != nil {
				s.log.Warn("site zip", "report", rec.ID, "file", f.Path, "err", err)
				panic(http.ErrAbortHandler)
			}
			src = o
		}
		fh := &zip.FileHeader{Name: f.Path, Method: zip.Deflate, Modified: zipTime}
		if stored[strings.ToLower(path.Ext(f.Path))] {
			fh.Method = zip.Store
		}
		fw, err := zw.CreateHeader(fh)
		if err == nil {
			_, err = io.Copy(fw, src)
		}
		src.Close()
		if err != nil {
			s.log.Warn("site zip", "report", rec.ID, "file", f.Path, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	if err := zw.Close(); err != nil {
		panic(http.ErrAbortHandler)
	}
	return nil
}

// staticSite answers GET of a path below /uploads/sites/: a site's
// filePath (and any file in it) redirects to the content origin; the
// manifests themselves are not served.
func (s *Server) staticSite(w http.ResponseWriter, r *http.Request) error {
	rest := strings.TrimPrefix(r.URL.Path, report.SitesPrefix)
	num, file, ok := strings.Cut(rest, "/")
	id, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || id <= 0 {
		return report.Errorf(report.NotFound, "file not found: %s", r.URL.Path)
	}
	rec, err := s.svc.ReportRecord(r.Context(), id)
	if err != nil || !rec.IsSite() {
		return report.Errorf(report.NotFound, "file not found: %s", r.URL.Path)
	}
	return s.redirectToContent(w, id, file)
}
