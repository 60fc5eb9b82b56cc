package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type projectsDeleteOptions struct {
	f    *Factory
	id   int64
	json bool
}

func newProjectsDeleteCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "delete ID",
		Aliases:           []string{"rm"},
		Short:             "Delete a project and all of its reports",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeProjectIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("project", args[0])
			if err != nil {
				return err
			}
			return projectsDeleteRun(cmd.Context(), &projectsDeleteOptions{f: f, id: id, json: wantJSON(cmd)})
		},
	}
}

func projectsDeleteRun(ctx context.Context, o *projectsDeleteOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	if err := c.DeleteProject(ctx, o.id); err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, deleted{ID: o.id, Deleted: true})
	}
	if o.f.IO.ErrTTY {
		fmt.Fprintf(o.f.IO.ErrOut, "Deleted project %d\n", o.id)
	}
	return nil
}
