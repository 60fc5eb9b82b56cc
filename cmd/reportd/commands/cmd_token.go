package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/daemon"
	"github.com/reportd/reportd/internal/tokens"
)

func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke scoped API tokens",
		Long: `Scoped API tokens, besides auth.token (which acts as an admin token):

  read     GET/HEAD of projects and reports (only its projects, if limited)
  upload   read, plus uploading reports into its projects
  admin    everything: project and report changes, deletes, tokens, backups

Once a token exists (and is not revoked) every change needs a token, and
reads too with auth.reads: true. A token's secret (rpt_<id>_<secret>) is
shown once, at creation; the store keeps only its SHA-256.

With no daemon running these commands open the store directly; with one,
they ask it over /admin/tokens with the admin key it wrote into the data
directory (and auth.token), like reportd backup.`,
	}
	var server string
	var asJSON bool
	pf := cmd.PersistentFlags()
	pf.StringVar(&server, "server", "", "base URL of the running daemon (default: the one recorded in the data directory)")
	pf.BoolVar(&asJSON, "json", false, "print JSON")
	ops := func(cmd *cobra.Command) (daemon.TokenOps, error) {
		c, err := config.Load(cmd.Flags())
		return daemon.TokenOps{Config: c, Server: server}, err
	}
	cmd.AddCommand(newTokenCreateCommand(ops, &asJSON), newTokenListCommand(ops, &asJSON), newTokenRevokeCommand(ops, &asJSON))
	return cmd
}

type opsFunc func(*cobra.Command) (daemon.TokenOps, error)

func newTokenCreateCommand(ops opsFunc, asJSON *bool) *cobra.Command {
	var req daemon.TokenRequest
	cmd := &cobra.Command{
		Use:   "create --scope read|upload|admin [--project ID]... [--allow-create-projects [--project-prefix PREFIX]] [--expires 90d] [--name NAME]",
		Short: "Create a token and print its secret once",
		Long: `Create a token. The secret goes to stdout alone (TOKEN=$(reportd token create ...)),
what it is and what its creation changes to stderr; --json prints both as
one object. The secret is never shown again: reportd keeps only its SHA-256.

An upload token made with --allow-create-projects may also create projects
(reportctl upload --create-project), only with names starting with
--project-prefix when given; each project it creates joins its projects.
It is limited to its projects (those of --project, and those it creates)
even while it has none: the narrowest token for a CI job that names its
project itself.

The first token of a server without auth.token changes it: from then on
every change (uploads included) needs a token. Reads stay open unless
auth.reads is true. The command says so when it happens.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := ops(cmd)
			if err != nil {
				return err
			}
			c, err := o.Create(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("token create: %w", err)
			}
			if *asJSON {
				return printJSON(cmd.OutOrStdout(), c)
			}
			errw := cmd.ErrOrStderr()
			fmt.Fprintf(errw, "created %s: scope %s, %s, expires %s\n", c.Token.ID, c.Token.Scope, describeProjects(c.Token), when(c.Token.ExpiresAt, "never"))
			if ts, err := o.List(cmd.Context()); err == nil {
				fmt.Fprintln(errw, daemon.Wrap(daemon.ExplainCreated(o.Config, c.Token, ts), 78))
			}
			fmt.Fprintln(errw, "The secret below is shown only this once: store it now (reportd keeps only its hash).")
			_, err = fmt.Fprintln(cmd.OutOrStdout(), c.Secret)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Scope, "scope", "", "read, upload or admin (required)")
	f.Int64SliceVar(&req.Projects, "project", nil, "limit the token to this project id (repeatable; not for admin)")
	f.BoolVar(&req.CreateProjects, "allow-create-projects", false, "an upload token that may create projects; each one it creates joins its projects")
	f.StringVar(&req.ProjectPrefix, "project-prefix", "", "with --allow-create-projects: the names of projects it creates must start with `PREFIX`")
	f.StringVar(&req.Expires, "expires", "", "lifetime, e.g. 90d or 12h (default: never)")
	f.StringVar(&req.Name, "name", "", "what the token is for, shown in lists")
	cmd.MarkFlagRequired("scope")
	config.Flags(cmd)
	return cmd
}

func newTokenListCommand(ops opsFunc, asJSON *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := ops(cmd)
			if err != nil {
				return err
			}
			ts, err := o.List(cmd.Context())
			if err != nil {
				return fmt.Errorf("token list: %w", err)
			}
			if *asJSON {
				return printJSON(cmd.OutOrStdout(), ts)
			}
			printTokens(cmd.OutOrStdout(), ts, time.Now())
			return nil
		},
	}
	config.Flags(cmd)
	return cmd
}

func newTokenRevokeCommand(ops opsFunc, asJSON *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revoke ID...",
		Short: "Revoke tokens by id",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := ops(cmd)
			if err != nil {
				return err
			}
			var out []tokens.Token
			for _, id := range args {
				t, err := o.Revoke(cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("token revoke: %w", err)
				}
				out = append(out, t)
				if !*asJSON {
					fmt.Fprintf(cmd.ErrOrStderr(), "revoked %s\n", t.ID)
				}
			}
			if ts, err := o.List(cmd.Context()); err == nil && o.Config.Auth.Token == "" && !anyLive(ts) {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: no token is left and auth.token is not set: the API is open to anyone who can reach it")
			}
			if *asJSON {
				return printJSON(cmd.OutOrStdout(), out)
			}
			return nil
		},
	}
	config.Flags(cmd)
	return cmd
}

func anyLive(ts []tokens.Token) bool {
	for _, t := range ts {
		if t.RevokedAt == nil {
			return true
		}
	}
	return false
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printTokens(w io.Writer, ts []tokens.Token, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCOPE\tPROJECTS\tSTATUS\tEXPIRES\tLAST USED\tNAME")
	for _, t := range ts {
		status := "active"
		switch {
		case t.RevokedAt != nil:
			status = "revoked"
		case !t.Live(now):
			status = "expired"
		}
		projects := "all"
		if len(t.Projects) > 0 {
			projects = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(t.Projects)), ","), "[]")
		}
		if t.CreateProjects { // limited to its projects, and those it creates
			if len(t.Projects) == 0 {
				projects = "created"
			} else {
				projects += ",created"
			}
			if t.ProjectPrefix != "" {
				projects += "(" + t.ProjectPrefix + "*)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Scope, projects, status, when(t.ExpiresAt, "never"), when(t.LastUsed, "-"), t.Name)
	}
	tw.Flush()
}

func describeProjects(t tokens.Token) string {
	ps := t.Projects
	var d string
	switch {
	case len(ps) == 0 && !t.CreateProjects:
		return "every project"
	case len(ps) > 0:
		d = "projects " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ps)), ", "), "[]")
	}
	if !t.CreateProjects {
		return d
	}
	if d != "" {
		d += ", and "
	}
	d += "the projects it creates"
	if t.ProjectPrefix != "" {
		d += fmt.Sprintf(" (names starting with %q)", t.ProjectPrefix)
	}
	return d
}

func when(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}
