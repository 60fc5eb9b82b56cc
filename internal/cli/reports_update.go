package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

type reportsUpdateOptions struct {
	f    *Factory
	id   int64
	in   report.ReportUpdate
	json bool
}

func newReportsUpdateCmd(f *Factory) *cobra.Command {
	var fileName, fileType string
	var meta [5]string
	cmd := &cobra.Command{
		Use:               "update ID [--file-name NAME] [--file-type TYPE] [--name NAME] [--branch B] [--commit C] [--build-url URL] [--build-id N]",
		Short:             "Change a report's file name, type or build metadata (\"\" clears a build field)",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeReportIDs(f),
		RunE: runWithID("report", func(cmd *cobra.Command, id int64) error {
			o := &reportsUpdateOptions{f: f, id: id, json: wantJSON(cmd)}
			if cmd.Flags().Changed("file-name") {
				o.in.FileName = &fileName
			}
			if cmd.Flags().Changed("file-type") {
				t, err := report.ParseFileType(fileType)
				if err != nil {
					return usageErrorf("--file-type: %s", report.MessageOf(err))
				}
				o.in.FileType = &t
			}
			for i, m := range metaSettings {
				if cmd.Flags().Changed(m.flag) {
					*m.field(&o.in.BuildMeta) = &meta[i]
				}
			}
			if o.in.FileName == nil && o.in.FileType == nil && o.in.BuildMeta == (report.BuildMeta{}) {
				return usageErrorf("nothing to change: give --file-name, --file-type or a build metadata flag")
			}
			return reportsUpdateRun(cmd.Context(), o)
		}),
	}
	cmd.Flags().StringVar(&fileName, "file-name", "", "new file name")
	cmd.Flags().StringVar(&fileType, "file-type", "", "new file type: "+report.TypeNames(", ", " or "))
	for i, m := range metaSettings {
		cmd.Flags().StringVar(&meta[i], m.flag, "", "new "+m.flag+` ("" clears it)`)
	}
	cmd.RegisterFlagCompletionFunc("file-type", cobra.FixedCompletions(fileTypeNames(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func fileTypeNames() []string {
	var out []string
	for _, t := range report.Types() {
		out = append(out, string(t.Type))
	}
	return out
}

func reportsUpdateRun(ctx context.Context, o *reportsUpdateOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	r, err := c.UpdateReport(ctx, o.id, o.in)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, r)
	}
	return printReport(o.f.IO.Out, o.f.IO.OutTTY, c, r)
}
