package commands

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
)

func newBackfillCommand() *cobra.Command {
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "backfill-results",
		Short: "Read per-test results for reports uploaded before they were kept",
		Long: `Read the per-test results and per-file coverage (docs/generators.md) of
every html report that has none, from its stored file or site, as an
upload does today, and store them: history comparisons and the flaky rule
then cover the builds uploaded before this version.

Idempotent and resumable: a report that has results is left alone, so a
second run (or one after an interruption) only does what is left. Reports
whose file cannot be read are counted as failed and logged; they do not
stop the run.

With storage: bolt the daemon must be stopped (bbolt's lock enforces it);
with storage: postgres and postgres+s3 the daemons may keep serving.

Prints the counts: reports looked at, already had results, filled, html
reports without per-test results, skipped (not html), failed. Exit status
0 when no report failed, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			var each func(int64, string)
			if verbose {
				each = func(id int64, outcome string) { fmt.Fprintf(out, "report %d: %s\n", id, outcome) }
			}
			n, err := daemon.BackfillResults(cmd.Context(), c, log, each)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(n); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%d reports: %d filled, %d had results, %d html without per-test results, %d not html, %d failed\n",
					n.Reports, n.Filled, n.Had, n.None, n.Skipped, n.Failed)
			}
			if n.Failed > 0 {
				return fmt.Errorf("backfill-results: %d reports could not be read (see the log above)", n.Failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every report's outcome")
	config.Flags(cmd)
	return cmd
}
