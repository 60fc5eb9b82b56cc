package commands

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/ops"
)

func newMigrateCommand() *cobra.Command {
	var opt daemon.MigrateOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate --from DATA_DIR [--resume]",
		Short: "Copy a bbolt deployment into PostgreSQL (and S3), then verify it",
		Long: `Copy the bbolt deployment in --from (its reportd.db and uploads/: report files,
covers, report sites, anything else stored there) into the target given by
the same keys, flags and environment as reportd serve: storage: postgres
(files into data_dir, or left in place when data_dir is --from) or
postgres+s3 (files into the bucket).

Ids, upload times, names, build metadata, generator and summary, retention
policies, covers and tokens are copied as they are (report rows by COPY,
20,000 a transaction); the counters are recomputed by the target and
compared with the source's; PostgreSQL's id
sequences are moved past every id bbolt handed out. Files are streamed,
hashed on the way (a report file must match its row's sha256), and at the
end every copied object is read back from the target and hashed again
(objects already in the target, in place or kept by --resume, were hashed
there while copying and are not read twice).

The source daemon must be stopped (bbolt's lock). The target must be empty
unless --resume, which continues an interrupted run: rows and objects
already there are kept when they match the source, the rest is copied.

Progress goes to stderr, the summary to stdout. Exit status: 0 copied and
verified; 1 failed or the verification found a difference; 2 refused
(--from missing or not a bbolt deployment, its daemon still running, target
settings wrong or not postgres/postgres+s3, target not empty without --resume).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.From == "" {
				return exitcode.With(exitcode.Usage, errors.New("migrate: --from DATA_DIR (the bbolt deployment) is required"))
			}
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return exitcode.With(exitcode.Usage, err)
			}
			opt.Progress = cmd.ErrOrStderr()
			sum, err := daemon.Migrate(cmd.Context(), c, opt)
			var r daemon.Refused
			switch {
			case errors.As(err, &r):
				return exitcode.With(exitcode.Usage, fmt.Errorf("migrate: %w", err))
			case err != nil:
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), sum)
			}
			printMigrate(cmd.OutOrStdout(), sum)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.From, "from", "", "data directory of the bbolt deployment to copy (required)")
	f.BoolVar(&opt.Resume, "resume", false, "continue into a non-empty target, keeping what is there and verified")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	config.Flags(cmd)
	return cmd
}

func printMigrate(w io.Writer, s daemon.MigrateSummary) {
	fmt.Fprintf(w, "migrated into storage: %s in %.1fs and verified\n", s.TargetStorage, s.Seconds)
	fmt.Fprintf(w, "  projects:   %d\n  reports:    %d\n  day counts: %d\n  tokens:     %d\n", s.Projects, s.Reports, s.DayCounts, s.Tokens)
	fmt.Fprintf(w, "  objects:    %d (%s): %d copied, %d already there; %d verified by sha256 from the target\n",
		s.Objects, ops.HumanSize(s.Bytes), s.ObjectsCopied, s.ObjectsKept, s.VerifiedObject)
	if s.RowsKept > 0 {
		fmt.Fprintf(w, "  rows already there (--resume): %d\n", s.RowsKept)
	}
	fmt.Fprintf(w, "  next ids:   projects after %d, reports after %d\n", s.LastProjectID, s.LastReportID)
}
