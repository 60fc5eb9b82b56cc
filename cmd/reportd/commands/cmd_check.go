package commands

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
)

func newCheckCommand() *cobra.Command {
	var repair, asJSON bool
	cmd := &cobra.Command{
		Use:   "check [--repair]",
		Short: "Verify the store against its files (daemon stopped)",
		Long: `Compare the metadata store with the data directory: rows whose file is missing,
files no row refers to (orphans), and counters (reportCount, the per-day
counts behind todayNewReports) or index entries that disagree with the rows.
Files left in tmp/ by a daemon that stopped mid-upload (a crash, a kill) are
listed apart as staged: no upload they belonged to was acknowledged, and the
next start removes them, so they do not make the check fail.

--repair drops rows whose file is gone (unsets covers), rebuilds counters and
the index from the rows, removes orphans and staged files, and checks again.

With metadata_store: bolt the daemon must be stopped: bbolt's lock enforces
it. With metadata_store: postgres (any file_store) the daemons may keep
serving: rows are checked against the objects (one walk of the file store;
site content objects and the PDF cache are never orphans; objects younger
than 15 minutes are left alone, as an upload places its object before its
row), and the counters against the rows; --repair
rewrites the counters and removes orphans, and lists rows whose object is
gone (restore it from the bucket's versions, or delete the report).

Exit status 0 when the store is clean (or was repaired), 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			rep, err := daemon.Check(cmd.Context(), c, repair)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printCheck(cmd.OutOrStdout(), rep)
			}
			if !rep.Clean(repair) {
				return fmt.Errorf("check: problems found%s", map[bool]string{true: " that --repair could not fix", false: " (run with --repair to fix them)"}[repair])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "fix what can be fixed")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	config.Flags(cmd)
	return cmd
}

func printCheck(w io.Writer, r daemon.CheckReport) {
	for _, m := range r.MissingFiles {
		if m.Report > 0 {
			fmt.Fprintf(w, "missing file: report %d (project %d): %s\n", m.Report, m.Project, m.Path)
		} else {
			fmt.Fprintf(w, "missing file: cover of project %d: %s\n", m.Project, m.Path)
		}
	}
	for _, o := range r.Orphans {
		fmt.Fprintf(w, "orphan: %s\n", o)
	}
	for _, s := range r.Staged {
		fmt.Fprintf(w, "staged: %s (left by a daemon that stopped mid-upload; the next start removes it)\n", s)
	}
	for _, d := range r.Drift {
		fmt.Fprintf(w, "drift: %s\n", d)
	}
	for _, s := range r.Repaired {
		fmt.Fprintf(w, "repaired: %s\n", s)
	}
	for _, s := range r.Unfixable {
		fmt.Fprintf(w, "not fixed: %s\n", s)
	}
	fmt.Fprintf(w, "checked: %d reports, %d covers; %d missing files, %d orphans, %d counter/index drifts; %d staged files\n",
		r.Counts["reports"], r.Counts["covers"], len(r.MissingFiles), len(r.Orphans), len(r.Drift), len(r.Staged))
}
