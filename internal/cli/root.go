package cli

import (
	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/watch"
)

// exitStatusHelp is appended to every command's help. The numbers are
// frozen (internal/exitcode).
const exitStatusHelp = `EXIT STATUS
  0    success
  1    a request failed (or a local file could not be read or written)
  2    usage error: bad flags, arguments or configuration
  3    the server refused the credentials (set --token / REPORTCTL_TOKEN)
  4    upload: a pattern matched no file (--allow-empty makes this 0)
  5    the server could not be reached after retries
  6    the token is valid but lacks the scope (HTTP 403, ForbiddenError)
  7    upload: a quality gate failed (--fail-under, --fail-on); the reports were published
  130  interrupted (Ctrl-C)
`

// NewRootCommand builds reportctl's command tree over f.
func NewRootCommand(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "reportctl",
		Short: "Command-line client of the Report Publishing Service (reportd)",
		Long: `reportctl manages projects and reports on a reportd server, and uploads
report files (` + report.TypeNames(", ", ", ") + `) from scripts and CI pipelines.

Settings come from flags, then REPORTCTL_* environment variables, then the
config file (~/.config/reportctl/config.yaml or --config), then defaults;
see 'reportctl help environment' and 'reportctl config'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.SetVersionTemplate("reportctl {{.Version}}\n")

	pf := root.PersistentFlags()
	addConfigFlags(pf)
	pf.Bool(jsonFlag, false, "print data as JSON (field names are the API's)")
	f.flags = pf

	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.With(exitcode.Usage, err)
	})
	root.SetHelpTemplate(root.HelpTemplate() + "\n" + exitStatusHelp)
	root.CompletionOptions.HiddenDefaultCmd = false

	root.AddGroup(
		&cobra.Group{ID: "api", Title: "Server commands:"},
		&cobra.Group{ID: "local", Title: "Local commands:"},
	)
	for _, c := range []*cobra.Command{
		newPingCmd(f),
		newProjectsCmd(f),
		newReportsCmd(f),
		newUploadCmd(f),
		newHistoryCmd(f),
		newCompareCmd(f),
		newPruneCmd(f),
		watch.NewCommand(watch.Deps{Client: f.Service, Stdout: f.IO.Out, Stderr: f.IO.ErrOut, Meta: &watchMeta{}}),
	} {
		c.GroupID = "api"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{
		newVersionCmd(f),
		newConfigCmd(f),
	} {
		c.GroupID = "local"
		root.AddCommand(c)
	}
	root.AddCommand(newEnvironmentTopic())
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			asGroup(c)
		}
	}
	root.SetHelpCommandGroupID("local")
	root.SetCompletionCommandGroupID("local")
	return root
}

// asGroup makes a command that only holds subcommands reject an unknown
// one with a usage error (cobra would print help and exit 0, hiding typos
// in scripts). Without arguments it prints its help.
func asGroup(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return cmd.Help()
	}
	return cmd
}
