package httpapi

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

func (s *Server) listReports(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	// An empty value means no filter, as in clients that always send the field.
	f := report.ReportFilter{Name: q.Get("name"), Branch: q.Get("branch")}
	if v := q.Get("projectId"); v != "" {
		id, err := report.ParseID("projectId", v)
		if err != nil {
			return err
		}
		f.ProjectID = &id
	}
	rs, err := s.svc.FindReports(r.Context(), f)
	if covers := s.visible(r); covers != nil {
		rs = slices.DeleteFunc(rs, func(r report.Report) bool { return !covers(r.ProjectID) })
	}
	if err == nil {
		s.withLinks(r, rs)
		writeJSON(w, http.StatusOK, rs)
	}
	return err
}

// uploadReport streams the parts in whatever order they come: each file
// part goes straight to a temp file, the small fields are collected, and
// the upload is validated and committed once the body has been read. One
// file part is a single file, or a site when it is an archive declared
// html; several file parts (relative names) are one site (sites.go).
func (s *Server) uploadReport(w http.ResponseWriter, r *http.Request) error {
	key, err := idemKey(r)
	if err != nil {
		return err
	}
	upload, _ := s.svc.Limits()
	if err := refuseAnnounced(r, upload); err != nil {
		return err
	}
	mr, err := multipartReader(w, r, uploadBodyLimit(upload))
	if err != nil {
		return err
	}
	var (
		up                  siteParts
		projectRaw, typeRaw *string
		entry, root         string
		meta                report.BuildMeta
	)
	defer up.discard()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return multipartError(err)
		}
		switch part.FormName() {
		case "file":
			var html bool
			if typeRaw != nil {
				t, err := report.ParseFileType(strings.TrimSpace(*typeRaw))
				html = err == nil && t == report.HTML
			}
			if err := s.stageFilePart(r.Context(), &up, part, html); err != nil {
				return err
			}
		case "projectId":
			v, err := readField(part, "projectId")
			if err != nil {
				return err
			}
			projectRaw = &v
			// Refuse a project the token does not cover before the file
			// part (if it comes later) is even read.
			if id, err := report.ParseID("projectId", v); err == nil {
				if err := s.permitProject(r, id); err != nil {
					return err
				}
			}
		case "fileType":
			v, err := readField(part, "fileType")
			if err != nil {
				return err
			}
			typeRaw = &v
		case "entry", "root":
			v, err := readField(part, part.FormName())
			if err != nil {
				return err
			}
			if part.FormName() == "entry" {
				entry = v
			} else {
				root = v
			}
		default:
			if dst := metaField(&meta, part.FormName()); dst != nil {
				v, err := readField(part, part.FormName())
				if err != nil {
					return err
				}
				*dst = &v
			}
		}
		part.Close()
	}
	if len(up.parts) == 0 {
		return report.Errorf(report.Validation, "file is required")
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer.ObserveUpload(up.bytes) // every file part's bytes: one upload
	}
	if projectRaw == nil {
		return report.Errorf(report.Validation, "projectId is required")
	}
	project, err := report.ParseID("projectId", *projectRaw)
	if err != nil {
		return err
	}
	if err := s.permitProject(r, project); err != nil {
		return err // the staged file is discarded: nothing was stored
	}
	if typeRaw == nil {
		return report.Errorf(report.Validation, "fileType is required")
	}
	t, err := report.ParseFileType(strings.TrimSpace(*typeRaw))
	if err != nil {
		return err
	}
	req := uploadRequest{ProjectID: project, FileType: t, Meta: meta, Entry: entry, Root: root}
	if len(up.parts) == 1 {
		req.FileName = up.fileName
	}
	for i, p := range up.parts {
		sum := up.first.SHA256
		if i > 0 {
			sum = up.staged[i-1].SHA256
		}
		req.Files = append(req.Files, [2]string{p.Name, sum})
	}
	answered, finish, err := s.idemClaim(w, r, key, req)
	if answered || err != nil {
		return err
	}
	status, body, err := s.commitUpload(r, &up, req)
	if err != nil {
		finish(0, nil)
		return err
	}
	finish(status, body)
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
	return nil
}

// commitUpload stores a parsed upload: a single file, or a site (one
// archive, or several parts). It returns the answer to send.
func (s *Server) commitUpload(r *http.Request, up *siteParts, req uploadRequest) (int, []byte, error) {
	project, t, meta, entry, root := req.ProjectID, req.FileType, req.Meta, req.Entry, req.Root
	var rep report.Report
	if len(up.parts) == 1 {
		format, err := service.IsSiteArchive(up.first, t, up.fileName)
		if err != nil {
			return 0, nil, err
		}
		if format == "" {
			if entry != "" || root != "" {
				return 0, nil, report.Errorf(report.Validation, "entry and root are for sites (an archive or several file parts), not a single file")
			}
			rep, err = s.svc.Commit(r.Context(), up.first, project, t, up.fileName, meta)
		} else {
			rep, err = s.svc.CommitSite(r.Context(), service.SiteUpload{ProjectID: project, FileType: t, FileName: up.fileName,
				Entry: entry, Root: root, Meta: meta, Archive: up.first, Format: format, Streamed: up.streamed, StreamMiss: up.streamMiss})
			up.streamed = nil // CommitSite finished or discarded it
		}
		if err != nil {
			return 0, nil, err
		}
	} else {
		var err error
		rep, err = s.svc.CommitSite(r.Context(), service.SiteUpload{ProjectID: project, FileType: t,
			Entry: entry, Root: root, Meta: meta, Parts: up.parts})
		if err != nil {
			return 0, nil, err
		}
	}
	s.withReportLinks(r, &rep)
	status, b := jsonBytes(http.StatusCreated, rep)
	return status, b, nil
}

func (s *Server) updateReport(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var body struct {
		FileName *string `json:"fileName"`
		FileType *string `json:"fileType"`
		report.BuildMeta
	}
	if err := decodeJSON(r, 1<<20, &body); err != nil {
		return err
	}
	in := report.ReportUpdate{FileName: body.FileName, BuildMeta: body.BuildMeta}
	if body.FileType != nil {
		t := report.FileType(*body.FileType)
		in.FileType = &t
	}
	rep, err := s.svc.UpdateReport(r.Context(), id, in)
	if err == nil {
		s.withReportLinks(r, &rep)
		writeJSON(w, http.StatusOK, rep)
	}
	return err
}

// metaField is where a multipart field of the build metadata goes, or nil
// for a field that is not one (unknown fields are ignored, as before).
func metaField(m *report.BuildMeta, name string) **string {
	switch name {
	case "name":
		return &m.Name
	case "branch":
		return &m.Branch
	case "commit":
		return &m.Commit
	case "buildUrl":
		return &m.BuildURL
	case "buildId":
		return &m.BuildID
	}
	return nil
}
