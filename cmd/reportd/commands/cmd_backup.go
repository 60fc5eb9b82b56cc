package commands

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
)

func newBackupCommand() *cobra.Command {
	var out, server string
	cmd := &cobra.Command{
		Use:   "backup --out FILE",
		Short: "Write a consistent backup archive (online or offline)",
		Long: `Write a backup archive: a bbolt snapshot plus every file it refers to, with a
manifest of sha256 checksums, as one tar file.

If no daemon holds the data directory the snapshot is taken directly. If a
daemon runs, bbolt's lock keeps other processes out, so the daemon is asked
for it over GET /admin/backup (at --server, default the configured addr on
loopback), sending the admin key the daemon wrote into the data directory
and the auth token from the config or REPORTD_AUTH_TOKEN.
The daemon keeps serving meanwhile. The archive is verified before it is
renamed into place, so FILE is either complete or absent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			m, err := daemon.Backup(cmd.Context(), c, out, server)
			if err != nil {
				return err
			}
			var bytes int64
			for _, e := range m.Entries {
				bytes += e.Size
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "backup: %s: %d entries, %d bytes, checksums verified\n", out, len(m.Entries), bytes)
			if len(m.Missing) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "backup: warning: %d rows refer to files that were already missing (run reportd check): %v\n", len(m.Missing), m.Missing)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "archive to write (required)")
	f.StringVar(&server, "server", "", "base URL of the running daemon, e.g. http://127.0.0.1:8080 (default: the configured addr)")
	config.Flags(cmd)
	return cmd
}
