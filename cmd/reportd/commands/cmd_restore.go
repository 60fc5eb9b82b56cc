package commands

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
)

func newRestoreCommand() *cobra.Command {
	var in string
	cmd := &cobra.Command{
		Use:   "restore [FILE | --in FILE] --data-dir DIR",
		Short: "Restore a backup archive into an empty data directory",
		Long: `Unpack a backup archive into DIR, which must be empty or absent. Every entry's
size and sha256 are checked against the archive's manifest before anything is
moved into place; then the restored store is checked against its files.
Start reportd on DIR afterwards (as the service's user: chown it, or under
DynamicUser restore into /var/lib/private/reportd while the unit is stopped).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if in != "" && in != args[0] {
					return fmt.Errorf("restore: give the archive once, as an argument or with --in")
				}
				in = args[0]
			}
			if in == "" {
				return fmt.Errorf("restore: which archive? (reportd restore FILE --data-dir DIR)")
			}
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			if c.OnPostgres() {
				return daemon.ErrPostgresBackup
			}
			m, err := daemon.Restore(in, c.DataDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "restore: %d entries verified and restored into %s (backup of %s)\n", len(m.Entries), c.DataDir, m.Created.Format("2006-01-02 15:04:05Z"))
			rep, err := daemon.Check(cmd.Context(), c, false)
			if err != nil {
				return fmt.Errorf("restore: checking the restored store: %w", err)
			}
			if !rep.Clean(false) {
				printCheck(cmd.ErrOrStderr(), rep)
				return fmt.Errorf("restore: the restored store has problems (the backup's source had them too); run reportd check --repair")
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "restore: store checked: %d reports, %d covers, no problems\n", rep.Counts["reports"], rep.Counts["covers"])
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "archive to restore (or give it as the argument)")
	config.Flags(cmd)
	return cmd
}
