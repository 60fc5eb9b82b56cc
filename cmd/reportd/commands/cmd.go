// Package commands is reportd's cobra command tree (serve, backup,
// restore, check, backfill-results, token, migrate, version): flags and
// output; the work is internal/daemon's. cmd/reportd calls Main;
// scripts/gencompletions reads NewRootCommand.
package commands

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/version"
)

// NewRootCommand is reportd's command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "reportd",
		Short:         "Serve the Report Publishing Service API",
		Long:          "reportd stores projects and report files (bbolt + a data directory), serves them over the\nReport Publishing Service API, and converts every report type to PDF.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetVersionTemplate("reportd {{.Version}}\n")
	root.AddCommand(newServeCommand(), newBackupCommand(), newRestoreCommand(), newCheckCommand(), newBackfillCommand(), newTokenCommand(), newMigrateCommand(), newVersionCommand())
	return root
}

func newServeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon",
		Long:  "Serve the API until SIGTERM or SIGINT.\n\n" + config.Help(),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			log, err := daemon.NewLogger(c)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s := &daemon.Server{Config: c, Log: log}
			defer s.Close()
			if err := s.Open(ctx); err != nil {
				return err
			}
			return s.Run(ctx)
		},
	}
	config.Flags(cmd)
	return cmd
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version.String())
			return err
		},
	}
}

// Main runs reportd with the process's arguments and returns its exit code.
func Main() int {
	root := NewRootCommand()
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "reportd:", err)
		return exitcode.Of(err) // 1, 130 on Ctrl-C, or what the command set
	}
	return 0
}
