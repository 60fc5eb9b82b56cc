package cli

import (
	"strconv"

	"github.com/spf13/cobra"
)

// parseID reads a positive integer id argument.
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf("invalid %s id %q: want a positive integer", what, s)
	}
	return id, nil
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// runWithID is the RunE of a command whose one argument is a project or
// report id: a bad id is a usage error, and run gets the parsed one.
func runWithID(what string, run func(cmd *cobra.Command, id int64) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		id, err := parseID(what, args[0])
		if err != nil {
			return err
		}
		return run(cmd, id)
	}
}
