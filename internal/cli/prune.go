package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

type pruneOptions struct {
	f        *Factory
	project  string
	override report.Retention
	apply    bool
	json     bool
}

func newPruneCmd(f *Factory) *cobra.Command {
	var (
		pf     policyFlags
		dryRun bool
		yes    bool
		o      = &pruneOptions{f: f}
	)
	cmd := &cobra.Command{
		Use:   "prune [--project ID|NAME] [--keep-last N] [--max-age AGE] [--keep-newest-per-branch=false] [--dry-run | --yes]",
		Short: "Preview or apply retention: remove old reports now",
		Long: `Apply the retention policies now, as the daemon's sweeper does every
retention.interval: each project's own policy (reportctl projects retention),
else the server default. Reports are grouped by name, file type and branch
(a report's identity: deck.pdf and deck.pptx are both named deck, yet
--keep-last 1 keeps one of each); the newest of a group is the one
uploaded last.

Without --yes nothing is removed: prune lists what would go, with names,
types, branches and upload dates (a dry run). --yes removes it, each
report as 'reportctl reports delete' would, and lists what it removed.
--keep-last, --max-age and --keep-newest-per-branch override the stored
policy for this run only. Without --project every project is pruned.`,
		Example: `  reportctl prune --project 3                   # what would go
  reportctl prune --project nightly --keep-last 10 --yes
  reportctl prune --max-age 90d --json          # every project, dry run`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun && yes {
				return usageErrorf("--dry-run and --yes exclude each other")
			}
			var err error
			if o.override, _, err = pf.retention(cmd, report.Retention{}); err != nil {
				return err
			}
			o.apply, o.json = yes, wantJSON(cmd)
			return pruneRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.project, "project", "p", "", "prune only this project (`ID, NAME or SLUG`)")
	pf.add(fl, "this run only")
	fl.BoolVar(&dryRun, "dry-run", false, "only show what would be removed (the default)")
	fl.BoolVarP(&yes, "yes", "y", false, "remove the reports")
	cmd.RegisterFlagCompletionFunc("project", completeProjectIDs(f))
	return cmd
}

func pruneRun(ctx context.Context, o *pruneOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	var project *int64
	if o.project != "" {
		p, err := findProject(ctx, c, o.project)
		if err != nil {
			return err
		}
		project = &p.ID
	}
	res, err := c.Prune(ctx, project, o.override, !o.apply)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, res)
	}
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "ID", "PROJECT", "NAME", "TYPE", "BRANCH", "FILE", "UPLOADED", "SIZE", "REASON")
	for _, it := range res.Reports {
		t.add(itoa(it.ID), itoa(it.ProjectID), it.Name, string(it.FileType), deref(it.Branch), it.FileName, it.UploadTime.String(), itoa(it.Size), it.Reason)
	}
	if err := t.print(); err != nil {
		return err
	}
	verb := "Removed"
	if res.DryRun {
		verb = "Would remove"
	}
	fmt.Fprintf(o.f.IO.ErrOut, "%s %d reports (%s) from %d projects looked at\n", verb, len(res.Reports), humanBytes(res.Bytes), res.Projects)
	if res.DryRun && len(res.Reports) > 0 {
		fmt.Fprintln(o.f.IO.ErrOut, "Dry run: nothing was removed. Run again with --yes to remove them.")
	}
	return nil
}

// humanBytes is n in B, KiB, MiB or GiB with one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 2; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMG"[exp])
}
