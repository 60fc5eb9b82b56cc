package cli

import (
	"context"

	"github.com/spf13/cobra"
)

type projectsListOptions struct {
	f    *Factory
	json bool
}

func newProjectsListCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List projects",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return projectsListRun(cmd.Context(), &projectsListOptions{f: f, json: wantJSON(cmd)})
		},
	}
}

func projectsListRun(ctx context.Context, o *projectsListOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	ps, err := c.ListProjects(ctx)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, ps)
	}
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "ID", "NAME", "REPORTS", "TODAY", "CREATED", "DESCRIPTION")
	for _, p := range ps {
		t.add(itoa(p.ID), p.Name, itoa(p.ReportCount), itoa(p.TodayNewReports), p.CreatedAt.String(), deref(p.Description))
	}
	return t.print()
}
