package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// newEnvironmentTopic is `reportctl help environment`: every variable in one place.
func newEnvironmentTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "Environment variables that configure reportctl",
		Long:  environmentHelp(),
	}
}

func environmentHelp() string {
	var b strings.Builder
	b.WriteString("Every setting can come from a flag, an environment variable, or the config\n")
	b.WriteString("file; a flag wins over the variable, the variable over the file, the file\n")
	b.WriteString("over the default. Durations are Go durations (500ms, 30s, 5m).\n\n")
	fmt.Fprintf(&b, "%s\n    Config file to read (flag --config; default %s).\n\n",
		EnvName(configKey), "~/.config/reportctl/config.yaml, or $XDG_CONFIG_HOME/reportctl/config.yaml")
	for _, s := range settings {
		def := fmt.Sprint(s.def)
		if def == "" {
			def = "unset"
		}
		fmt.Fprintf(&b, "%s\n    %s (flag --%s, config key %q; default %s).\n\n", EnvName(s.key), capitalize(s.usage), s.key, s.key, def)
	}
	writeCIHelp(&b)
	b.WriteString(feedbackEnvHelp)
	b.WriteString("XDG_CONFIG_HOME\n    Base directory of the default config file.\n\n")
	b.WriteString("HTTP_PROXY, HTTPS_PROXY, NO_PROXY\n    Proxy for requests to the server, as usual for Go programs.\n")
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
