package cli

import (
	"context"

	"github.com/spf13/cobra"
)

type projectsGetOptions struct {
	f    *Factory
	id   int64
	json bool
}

func newProjectsGetCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "get ID",
		Aliases:           []string{"show", "view"},
		Short:             "Show one project",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeProjectIDs(f),
		RunE: runWithID("project", func(cmd *cobra.Command, id int64) error {
			return projectsGetRun(cmd.Context(), &projectsGetOptions{f: f, id: id, json: wantJSON(cmd)})
		}),
	}
}

func projectsGetRun(ctx context.Context, o *projectsGetOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	p, err := c.GetProject(ctx, o.id)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, p)
	}
	return printProject(o.f.IO.Out, o.f.IO.OutTTY, c.StaticURL, p)
}
