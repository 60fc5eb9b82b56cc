package httpapi

import (
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

func (s *Server) ping(w http.ResponseWriter, r *http.Request) error {
	p, err := s.svc.Ping(r.Context())
	if err == nil {
		writeJSON(w, http.StatusOK, p)
	}
	return err
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.svc.ListProjects(r.Context())
	if covers := s.visible(r); covers != nil {
		ps = slices.DeleteFunc(ps, func(p report.Project) bool { return !covers(p.ID) })
	}
	if err == nil {
		writeJSON(w, http.StatusOK, ps)
	}
	return err
}

// projectCreateBody mirrors report.ProjectCreate with raw fields, so that a
// wrong type names the field instead of failing the whole decode obscurely.
type projectCreateBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	CoverImage  *string `json:"coverImage"`
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	var body projectCreateBody
	if err := decodeJSON(r, s.cfg.MaxJSONBytes, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return report.Errorf(report.Validation, "name is required")
	}
	creator := s.creatorOf(r)
	if err := creator.checkName(*body.Name); err != nil {
		return err
	}
	p, err := s.svc.CreateProject(r.Context(), report.ProjectCreate{
		Name: *body.Name, Description: body.Description, CoverImage: body.CoverImage})
	if err == nil {
		err = s.joinCreated(r.Context(), creator, p.ID)
	}
	if err == nil {
		writeJSON(w, http.StatusCreated, p)
	}
	return err
}

// updateProject reads the multipart parts name, slug, description and coverImage.
// The cover is held in memory: covers are capped small (max_cover_bytes).
func (s *Server) updateProject(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	_, maxCover := s.svc.Limits()
	mr, err := multipartReader(w, r, maxCover+1<<20)
	if err != nil {
		return err
	}
	var in report.ProjectUpdate
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return multipartError(err)
		}
		switch part.FormName() {
		case "name":
			v, err := readField(part, "name")
			if err != nil {
				return err
			}
			in.Name = &v
		case "slug":
			v, err := readField(part, "slug")
			if err != nil {
				return err
			}
			in.Slug = &v
		case "description":
			v, err := readField(part, "description")
			if err != nil {
				return err
			}
			in.Description = &v
		case "coverImage":
			if in.Cover != nil {
				return report.Errorf(report.Validation, "more than one coverImage part")
			}
			data, err := io.ReadAll(io.LimitReader(part, maxCover+1))
			if err != nil {
				return multipartError(err)
			}
			if int64(len(data)) > maxCover {
				return report.Errorf(report.PayloadTooLarge, "coverImage exceeds the limit of %d bytes", maxCover)
			}
			if len(data) > 0 {
				in.Cover = &report.Upload{FileName: part.FileName(), Body: strings.NewReader(string(data))}
			}
		}
		part.Close()
	}
	p, err := s.svc.UpdateProject(r.Context(), id, in)
	if err == nil {
		writeJSON(w, http.StatusOK, p)
	}
	return err
}

func isMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}
