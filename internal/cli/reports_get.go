package cli

import (
	"context"

	"github.com/spf13/cobra"
)

type reportsGetOptions struct {
	f    *Factory
	id   int64
	json bool
}

func newReportsGetCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "get ID",
		Aliases: []string{"show", "view"},
		Short:   "Show one report's metadata",
		Long: `Show one report's metadata and its preview, download and PDF addresses.
With --json the API's object is printed as is, including fileContent (the
text of html and md reports).`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeReportIDs(f),
		RunE: runWithID("report", func(cmd *cobra.Command, id int64) error {
			return reportsGetRun(cmd.Context(), &reportsGetOptions{f: f, id: id, json: wantJSON(cmd)})
		}),
	}
}

func reportsGetRun(ctx context.Context, o *reportsGetOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	r, err := c.GetReport(ctx, o.id)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, r)
	}
	return printReport(o.f.IO.Out, o.f.IO.OutTTY, c, r)
}
