package cli

import (
	"context"

	"github.com/spf13/cobra"
)

type reportsListOptions struct {
	f       *Factory
	project *int64
	json    bool
}

func newReportsListCmd(f *Factory) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:     "list [--project ID]",
		Aliases: []string{"ls"},
		Short:   "List reports, of every project or of one",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := &reportsListOptions{f: f, json: wantJSON(cmd)}
			if cmd.Flags().Changed("project") {
				id, err := parseID("project", project)
				if err != nil {
					return err
				}
				o.project = &id
			}
			return reportsListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&project, "project", "p", "", "only reports of project `ID`")
	cmd.RegisterFlagCompletionFunc("project", completeProjectFlag(f))
	return cmd
}

func reportsListRun(ctx context.Context, o *reportsListOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	rs, err := c.ListReports(ctx, o.project)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, rs)
	}
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "ID", "PROJECT", "TYPE", "UPLOADED", "FILE")
	for _, r := range rs {
		t.add(itoa(r.ID), itoa(r.ProjectID), string(r.FileType), r.UploadTime.String(), r.FileName)
	}
	return t.print()
}
