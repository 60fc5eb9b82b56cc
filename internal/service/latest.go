package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// ResolveProject turns a project reference from a stable link into an id:
// decimal digits are an id (the project must exist); else a project's
// slug (one index lookup); else a project name, which must belong to
// exactly one project (none: NotFound; several: a ValidationError listing
// their ids). Names may hold anything, "/" included ("acme/api").
//
// visible, when not nil, limits slugs and names to the projects a caller
// may see (a project-limited token): a slug or name of another project is
// NotFound, and an ambiguity is judged among the visible ones, so names
// and ids of other projects cannot be probed. An id is answered as
// everywhere in the API.
func (s *Service) ResolveProject(ctx context.Context, ref string, visible func(int64) bool) (int64, error) {
	if id, err := report.ParseID("project", ref); err == nil {
		_, err := s.meta.Project(ctx, id)
		return id, err
	}
	if ref == "" {
		return 0, report.Errorf(report.Validation, "project is empty")
	}
	if report.CheckSlug(ref) == nil {
		p, err := s.meta.ProjectBySlug(ctx, ref)
		switch {
		case err == nil && (visible == nil || visible(p.ID)):
			return p.ID, nil
		case err != nil && !report.IsKind(err, report.NotFound):
			return 0, err
		}
	}
	ps, err := s.meta.Projects(ctx)
	if err != nil {
		return 0, err
	}
	var ids []string
	var id int64
	for _, p := range ps {
		if p.Name == ref && (visible == nil || visible(p.ID)) {
			id = p.ID
			ids = append(ids, fmt.Sprint(p.ID))
		}
	}
	switch len(ids) {
	case 0:
		return 0, report.Errorf(report.NotFound, "no project with the slug or name %q", ref)
	case 1:
		return id, nil
	}
	return 0, report.Errorf(report.Validation, "%d projects are named %q (ids %s): use the id", len(ids), ref, strings.Join(ids, ", "))
}

// Latest is the newest report matching q (report.MetaStore.Latest).
func (s *Service) Latest(ctx context.Context, q report.LatestQuery) (report.Report, error) {
	if err := checkQueryMeta(q.Name, q.Branch); err != nil {
		return report.Report{}, err
	}
	rec, err := s.meta.Latest(ctx, q)
	return rec.Report, err
}
