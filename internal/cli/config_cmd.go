package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type configOptions struct {
	f         *Factory
	json      bool
	showToken bool
}

// configEntry is one line of `reportctl config`.
type configEntry struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
}

func newConfigCmd(f *Factory) *cobra.Command {
	o := &configOptions{f: f}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and where each value came from",
		Long: `Show every setting's effective value and its source: a flag, an
environment variable, the config file, or the default. The token is masked
unless --show-token is given.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.json = wantJSON(cmd)
			return configRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.showToken, "show-token", false, "print the token in clear")
	return cmd
}

func configRun(_ context.Context, o *configOptions) error {
	cfg, err := o.f.Config()
	if err != nil {
		return err
	}
	token := cfg.Token
	if token != "" && !o.showToken {
		token = "********"
	}
	values := map[string]any{
		configKey:         cfg.File,
		"server":          cfg.Server,
		"token":           token,
		"timeout":         cfg.Timeout.String(),
		"connect-timeout": cfg.ConnectTimeout.String(),
		"retries":         cfg.Retries,
		"retry-wait":      cfg.RetryWait.String(),
		"retry-max-wait":  cfg.RetryMaxWait.String(),
	}
	keys := []string{configKey}
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	if o.json {
		out := make(map[string]configEntry, len(keys))
		for _, k := range keys {
			out[k] = configEntry{Value: values[k], Source: cfg.Sources[k]}
		}
		return writeJSON(o.f.IO.Out, out)
	}
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "KEY", "VALUE", "SOURCE")
	for _, k := range keys {
		t.add(k, fmt.Sprint(values[k]), cfg.Sources[k])
	}
	return t.print()
}
