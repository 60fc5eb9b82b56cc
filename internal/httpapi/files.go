package httpapi

import (
	"net/http"
	"path"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
)

// fileList is the body of GET /api/reports/{id}/files: what a report is
// made of. A site lists its manifest (service.SiteManifest); a single-file
// report lists its one file. The dashboard draws its file tree from it.
type fileList struct {
	ReportID int64  `json:"reportId"`
	Kind     string `json:"kind"`
	// Entry is the page a site opens on ("" when it has none and the
	// content origin shows a generated listing); a single file's name.
	Entry      string     `json:"entry"`
	Count      int        `json:"count"`
	TotalBytes int64      `json:"totalBytes"`
	Files      []fileItem `json:"files"`
}

// fileItem is one file; URL opens it on the content origin (signed when
// auth is on) and is omitted where the report is not served there.
type fileItem struct {
	Path        string `json:"path"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	SHA256      string `json:"sha256"`
	URL         string `json:"url,omitempty"`
}

func (s *Server) reportFiles(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	// The record alone: neither the file's text (GetReport) nor its
	// object (OpenReport) is needed to list it.
	rec, err := s.svc.ReportRecord(r.Context(), id)
	if err != nil {
		return err
	}
	if _, served := service.ContentEntry(&rec.Report); !served {
		// pdf, md, ppt, pptx: not on the content origin; their one file.
		name := path.Base(rec.FileName)
		writeJSON(w, http.StatusOK, fileList{ReportID: id, Kind: report.KindFile, Entry: name, Count: 1, TotalBytes: rec.Size,
			Files: []fileItem{{Path: name, Size: rec.Size, ContentType: rec.FileType.ContentType(), SHA256: rec.SHA256}}})
		return nil
	}
	m, err := s.svc.SiteManifest(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.listOf(rec.Report, m))
	return nil
}

// listOf is m as the API lists it, each file with its content URL.
func (s *Server) listOf(rep report.Report, m site.Manifest) fileList {
	out := fileList{ReportID: rep.ID, Kind: rep.Kind, Entry: m.Entry, Count: len(m.Files), TotalBytes: m.TotalBytes, Files: make([]fileItem, len(m.Files))}
	if out.Kind == "" {
		out.Kind = report.KindFile
	}
	for i, f := range m.Files {
		out.Files[i] = fileItem{Path: f.Path, Size: f.Size, ContentType: f.ContentType, SHA256: f.SHA256}
		if s.cfg.ContentURL != nil {
			out.Files[i].URL = s.cfg.ContentURL(rep.ID, f.Path)
		}
	}
	return out
}
