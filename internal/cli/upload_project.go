package cli

import (
	"context"
	"fmt"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

// resolveProject finds the project to upload into before any file is sent,
// so a wrong id or name fails once rather than once per file. With dryRun
// nothing is created; a project that would be created resolves to 0.
func resolveProject(ctx context.Context, c *client.Client, o *uploadOptions) (report.Project, error) {
	if o.projectID != 0 {
		return c.GetProject(ctx, o.projectID)
	}
	ps, err := c.ListProjects(ctx)
	if err != nil {
		return report.Project{}, err
	}
	var found []report.Project
	for _, p := range ps {
		if p.Name == o.projectName {
			found = append(found, p)
		}
	}
	if len(found) == 0 { // a slug, as stable links show it (acme-api for acme/api)
		for _, p := range ps {
			if p.Slug == o.projectName {
				found = append(found, p)
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		ids := ""
		for i, p := range found {
			if i > 0 {
				ids += ", "
			}
			ids += itoa(p.ID)
		}
		return report.Project{}, fmt.Errorf("%d projects are named %q (ids %s): use --project ID", len(found), o.projectName, ids)
	case !o.createProject:
		return report.Project{}, report.Errorf(report.NotFound, "no project named %q (add --create-project to create it)", o.projectName)
	case o.dryRun:
		return report.Project{Name: o.projectName}, nil
	}
	return c.CreateProject(ctx, report.ProjectCreate{Name: o.projectName})
}
