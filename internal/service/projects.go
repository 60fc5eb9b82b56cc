package service

import (
	"context"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

func (s *Service) ListProjects(ctx context.Context) ([]report.Project, error) {
	return s.meta.Projects(ctx)
}

func (s *Service) GetProject(ctx context.Context, id int64) (report.Project, error) {
	return s.meta.Project(ctx, id)
}

// CreateProject validates everything, fetches or decodes the cover into a
// staged file, and only then reserves an id, places the cover and commits.
func (s *Service) CreateProject(ctx context.Context, in report.ProjectCreate) (report.Project, error) {
	name, err := checkProjectName(in.Name)
	if err != nil {
		return report.Project{}, err
	}
	if err := checkDescription(in.Description); err != nil {
		return report.Project{}, err
	}
	var (
		cover     *files.Staged
		coverName string
	)
	if in.CoverImage != nil && *in.CoverImage != "" {
		if cover, coverName, err = s.coverFromString(ctx, *in.CoverImage); err != nil {
			return report.Project{}, err
		}
		defer cover.Discard()
	}
	id, err := s.meta.NextProjectID(ctx)
	if err != nil {
		return report.Project{}, err
	}
	p := report.Project{ID: id, Name: name, Description: in.Description,
		CreatedAt: report.LocalTime{Time: s.cfg.Clock.NowLocal()}}
	if cover != nil {
		path := coverDir(id) + "/" + coverName
		if err := s.place(ctx, cover, path); err != nil {
			return report.Project{}, err
		}
		p.CoverImage = &path
	}
	out, err := s.meta.CreateProject(ctx, p)
	if err != nil && p.CoverImage != nil {
		s.removeFile(*p.CoverImage)
	}
	return out, err
}

func (s *Service) UpdateProject(ctx context.Context, id int64, in report.ProjectUpdate) (report.Project, error) {
	var change report.ProjectChange
	if in.Name != nil {
		name, err := checkProjectName(*in.Name)
		if err != nil {
			return report.Project{}, err
		}
		change.Name = &name
	}
	if in.Slug != nil {
		if err := report.CheckSlug(*in.Slug); err != nil {
			return report.Project{}, err
		}
		change.Slug = in.Slug
	}
	if err := checkDescription(in.Description); err != nil {
		return report.Project{}, err
	}
	change.Description = in.Description
	if _, err := s.meta.Project(ctx, id); err != nil {
		return report.Project{}, err
	}
	if in.Cover != nil {
		cover, name, err := s.stageCover(in.Cover.Body, in.Cover.FileName)
		if err != nil {
			return report.Project{}, err
		}
		defer cover.Discard()
		path := coverDir(id) + "/" + name
		if err := s.place(ctx, cover, path); err != nil {
			return report.Project{}, err
		}
		change.CoverImage = &path
	}
	p, old, err := s.meta.UpdateProject(ctx, id, change)
	if err != nil {
		if change.CoverImage != nil {
			s.removeFile(*change.CoverImage)
		}
		return p, err
	}
	if old != nil && change.CoverImage != nil && *old != *change.CoverImage {
		s.removeFile(*old)
	}
	return p, nil
}

// DeleteProject commits the row change first, then removes files: a crash
// in between leaves only orphans, which the start-up sweep removes.
func (s *Service) DeleteProject(ctx context.Context, id int64) error {
	_, reports, err := s.meta.DeleteProject(ctx, id)
	if err != nil {
		return err
	}
	sites := false
	for _, r := range reports {
		sites = s.removeStored(r) || sites
		s.forget(r.ID)
	}
	if sites {
		s.collectSites(ctx)
	}
	if err := s.removeCovers(id); err != nil {
		s.log.Warn("remove cover folder", "project", id, "err", err)
	}
	return nil
}

// removeCovers deletes a project's cover folder and everything in it.
func (s *Service) removeCovers(project int64) error {
	key, err := files.Key(coverDir(project))
	if err != nil {
		return err
	}
	return blob.DeletePrefix(context.Background(), s.blobs, key+"/")
}
