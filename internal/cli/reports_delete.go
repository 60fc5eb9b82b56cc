package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type reportsDeleteOptions struct {
	f    *Factory
	id   int64
	json bool
}

func newReportsDeleteCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "delete ID",
		Aliases:           []string{"rm"},
		Short:             "Delete a report",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeReportIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("report", args[0])
			if err != nil {
				return err
			}
			return reportsDeleteRun(cmd.Context(), &reportsDeleteOptions{f: f, id: id, json: wantJSON(cmd)})
		},
	}
}

func reportsDeleteRun(ctx context.Context, o *reportsDeleteOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	if err := c.DeleteReport(ctx, o.id); err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, deleted{ID: o.id, Deleted: true})
	}
	if o.f.IO.ErrTTY {
		fmt.Fprintf(o.f.IO.ErrOut, "Deleted report %d\n", o.id)
	}
	return nil
}
