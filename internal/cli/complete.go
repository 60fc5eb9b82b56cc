package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
)

// completionClient is a quick, retry-free client: a shell waiting on Tab
// must not hang on a server that is down.
func completionClient(f *Factory) *client.Client {
	cfg, err := f.Config()
	if err != nil {
		return nil
	}
	c, err := client.New(client.Options{
		Server: cfg.Server, Token: cfg.Token,
		ConnectTimeout: time.Second, Timeout: 3 * time.Second, Retries: 0,
	})
	if err != nil {
		return nil
	}
	return c
}

// completeProjectIDs offers "id<TAB>name" for the first argument, and
// silently nothing when the server cannot be asked.
func completeProjectIDs(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return projectIDCandidates(cmd.Context(), f, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func projectIDCandidates(ctx context.Context, f *Factory, prefix string) []string {
	c := completionClient(f)
	if c == nil {
		return nil
	}
	ps, err := c.ListProjects(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range ps {
		if id := itoa(p.ID); strings.HasPrefix(id, prefix) {
			out = append(out, id+"\t"+flatten(p.Name))
		}
	}
	return out
}

// completeReportIDs offers "id<TAB>file name" for the first argument.
func completeReportIDs(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c := completionClient(f)
		if c == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		rs, err := c.ListReports(cmd.Context(), nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, r := range rs {
			if id := itoa(r.ID); strings.HasPrefix(id, toComplete) {
				out = append(out, id+"\t"+flatten(r.FileName))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeProjectFlag completes --project with project ids.
func completeProjectFlag(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return projectIDCandidates(cmd.Context(), f, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeProjectNames completes --project-name with the names on the server.
func completeProjectNames(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c := completionClient(f)
		if c == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ps, err := c.ListProjects(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, p := range ps {
			if strings.HasPrefix(p.Name, toComplete) {
				out = append(out, p.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
