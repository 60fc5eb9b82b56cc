package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

type reportsListOptions struct {
	f       *Factory
	project *int64
	name    string
	branch  string
	json    bool
}

func newReportsListCmd(f *Factory) *cobra.Command {
	var project, name, branch string
	cmd := &cobra.Command{
		Use:     "list [--project ID] [--name NAME] [--branch BRANCH]",
		Aliases: []string{"ls"},
		Short:   "List reports, of every project or of one",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := &reportsListOptions{f: f, json: wantJSON(cmd), name: name, branch: branch}
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
	cmd.Flags().StringVar(&name, "name", "", "only reports named `NAME` (such as coverage)")
	cmd.Flags().StringVar(&branch, "branch", "", "only reports of `BRANCH`")
	cmd.RegisterFlagCompletionFunc("project", completeProjectFlag(f))
	return cmd
}

func reportsListRun(ctx context.Context, o *reportsListOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	rs, err := c.FindReports(ctx, report.ReportFilter{ProjectID: o.project, Name: o.name, Branch: o.branch})
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, rs)
	}
	// Columns are only ever added at the end, for scripts that cut them.
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "ID", "PROJECT", "TYPE", "UPLOADED", "FILE", "NAME", "BRANCH", "COMMIT",
		"KIND", "FILES", "SIZE", "SITE")
	for _, r := range rs {
		files, size := "-", "-"
		if r.IsSite() {
			files, size = itoa(int64(r.Files)), sizeOf(r.Bytes, o.f.IO.OutTTY)
		}
		t.add(itoa(r.ID), itoa(r.ProjectID), string(r.FileType), r.UploadTime.String(), r.FileName,
			r.Name, orDash(r.Branch), orDash(nonNil(shortCommit(r.Commit))),
			orDash(&r.Kind), files, size, orDash(&r.SiteURL))
	}
	return t.print()
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func nonNil(s string) *string { return &s }
