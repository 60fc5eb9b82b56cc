package config

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// Flags adds the flags that serve, backup, check and restore share:
// --config and the settings that have a flag.
func Flags(cmd *cobra.Command) {
	f := cmd.Flags()
	for _, s := range settings {
		if s.flag != "" {
			f.String(s.flag, s.def, fmt.Sprintf("%s (env %s)", s.help, envName(s.key)))
		}
	}
	f.String("config", "", "config file (env REPORTD_CONFIG; default "+defaultConfigFile+" if present)")
}

// Help lists every setting for `reportd serve --help`, from the
// same table that loads them.
func Help() string {
	var b strings.Builder
	b.WriteString("Settings: key in the config file, environment variable, default, meaning.\n")
	b.WriteString("Precedence: flag > environment > config file > default. Unknown keys and\n")
	b.WriteString("REPORTD_* variables are errors. config/reportd.yaml documents each key.\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, s := range settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.key, envName(s.key), quoteEmpty(s.def), s.help)
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
