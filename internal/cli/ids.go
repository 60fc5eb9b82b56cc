package cli

import (
	"strconv"
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
