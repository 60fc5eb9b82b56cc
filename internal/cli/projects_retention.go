package cli

import (
	"context"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

func newProjectsRetentionCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "Show or set a project's retention policy",
		Long: `A project's retention policy says which of its reports the daemon's sweeper
(and 'reportctl prune') removes. A field the project does not set inherits
the server default (reportd.yaml retention.*).`,
	}
	asGroup(cmd)
	cmd.AddCommand(newRetentionGetCmd(f), newRetentionSetCmd(f), newRetentionClearCmd(f))
	return cmd
}

func newRetentionGetCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "get ID",
		Short:             "Show a project's retention policy and what applies",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeProjectIDs(f),
		RunE: runWithID("project", func(cmd *cobra.Command, id int64) error {
			return retentionDo(cmd, f, func(ctx context.Context, c *client.Client) (report.RetentionView, error) {
				return c.GetRetention(ctx, id)
			})
		}),
	}
}

func newRetentionSetCmd(f *Factory) *cobra.Command {
	var pf policyFlags
	cmd := &cobra.Command{
		Use:   "set ID [--keep-last N] [--max-age AGE] [--keep-newest-per-branch=BOOL]",
		Short: "Change a project's retention policy",
		Long: `Change the fields given; the others stay as they are. A value of inherit
(--keep-last inherit, --keep-newest-per-branch=inherit) makes the field
follow the server default again. Nothing is removed until the sweeper or
'reportctl prune --yes' runs.`,
		Example: `  reportctl projects retention set 3 --keep-last 10 --max-age 90d
  reportctl projects retention set 3 --keep-newest-per-branch=false
  reportctl projects retention set 3 --max-age inherit`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeProjectIDs(f),
		RunE: runWithID("project", func(cmd *cobra.Command, id int64) error {
			if _, changed, err := pf.retention(cmd, report.Retention{}); err != nil {
				return err
			} else if !changed {
				return usageErrorf("nothing to change: give --keep-last, --max-age or --keep-newest-per-branch")
			}
			return retentionDo(cmd, f, func(ctx context.Context, c *client.Client) (report.RetentionView, error) {
				cur, err := c.GetRetention(ctx, id)
				if err != nil {
					return cur, err
				}
				r, _, _ := pf.retention(cmd, cur.Retention)
				return c.SetRetention(ctx, id, r)
			})
		}),
	}
	pf.add(cmd.Flags(), "inherit: the server default")
	return cmd
}

func newRetentionClearCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "clear ID",
		Short:             "Remove a project's policy: the server default applies",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeProjectIDs(f),
		RunE: runWithID("project", func(cmd *cobra.Command, id int64) error {
			return retentionDo(cmd, f, func(ctx context.Context, c *client.Client) (report.RetentionView, error) {
				return c.SetRetention(ctx, id, report.Retention{})
			})
		}),
	}
}

// retentionDo runs call and prints the policy it answers.
func retentionDo(cmd *cobra.Command, f *Factory, call func(context.Context, *client.Client) (report.RetentionView, error)) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	v, err := call(cmd.Context(), c)
	if err != nil {
		return err
	}
	if wantJSON(cmd) {
		return writeJSON(f.IO.Out, v)
	}
	return printRetention(f.IO.Out, f.IO.OutTTY, v)
}

func printRetention(w io.Writer, tty bool, v report.RetentionView) error {
	newest := strconv.FormatBool(v.Effective.KeepNewestPerBranch)
	if v.KeepNewestPerBranch == nil {
		newest += " (server default)"
	}
	age := report.FormatAgeDays(v.Effective.MaxAgeDays)
	if v.Effective.MaxAgeDays == 0 {
		age = "no limit"
	}
	if v.MaxAgeDays == nil {
		age += " (server default)"
	}
	return printFields(w, tty,
		"keepLast", showInt(v.KeepLast, v.Effective.KeepLast, "no limit"),
		"maxAge", age,
		"keepNewestPerBranch", newest,
	)
}
