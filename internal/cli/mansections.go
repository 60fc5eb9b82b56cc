package cli

import (
	"fmt"
	"strings"
)

// ManSections is Markdown that reportctl's man page adds to its
// description: ENVIRONMENT and EXIT STATUS, built from the settings table
// and the exit status help, so the page and `reportctl help` cannot differ.
// Each entry is a definition list item (md2man renders them as .TP).
func ManSections() string {
	var b strings.Builder
	b.WriteString("# ENVIRONMENT\n\n")
	fmt.Fprintf(&b, "%s\n: Config file to read (flag --config; default ~/.config/reportctl/config.yaml, or $XDG_CONFIG_HOME/reportctl/config.yaml).\n\n", EnvName(configKey))
	for _, s := range settings {
		def := fmt.Sprint(s.def)
		if def == "" {
			def = "unset"
		}
		fmt.Fprintf(&b, "%s\n: %s (flag --%s; default %s).\n\n", EnvName(s.key), capitalize(s.usage), s.key, def)
	}
	b.WriteString("XDG_CONFIG_HOME\n: Base directory of the default config file.\n\n")
	b.WriteString("HTTP_PROXY, HTTPS_PROXY, NO_PROXY\n: Proxy for requests to the server, as usual for Go programs.\n\n")

	b.WriteString("# EXIT STATUS\n\n")
	for _, line := range strings.Split(exitStatusHelp, "\n")[1:] {
		code, text, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "%s\n: %s\n\n", code, strings.TrimSpace(text))
	}
	return b.String()
}
