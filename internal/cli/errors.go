package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

// usageErrorf is a bad invocation: exit status 2.
func usageErrorf(format string, args ...any) error {
	return exitcode.With(exitcode.Usage, fmt.Errorf(format, args...))
}

// exitCodeOf is the one table from errors to exit statuses.
func exitCodeOf(err error) int {
	if err == nil {
		return exitcode.OK
	}
	var ee *exitcode.Error
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return exitcode.Interrupted
	case client.IsUnreachable(err):
		return exitcode.Unreachable
	case isAPIKind(err, report.Unauthorized):
		return exitcode.Auth
	case isAPIKind(err, report.Forbidden):
		return exitcode.Forbidden
	case isCobraUsage(err):
		return exitcode.Usage
	}
	return exitcode.Failed
}

func isAPIKind(err error, k report.Kind) bool {
	var re *report.Error
	return errors.As(err, &re) && re.Kind == k
}

// isCobraUsage recognises the errors cobra builds itself, which carry no type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag", "invalid argument", "flag needs an argument", "accepts ", "requires at least", "requires at most", "bad flag syntax"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// usageArgs wraps a cobra positional-args check so its failures exit 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return exitcode.With(exitcode.Usage, err)
		}
		return nil
	}
}

// errorMessage is what the user sees for err; auth and reachability get a hint.
func errorMessage(err error) string {
	switch exitCodeOf(err) {
	case exitcode.Auth:
		if strings.Contains(err.Error(), "REPORTCTL_TOKEN") {
			return err.Error() // the client already said how to give one
		}
		return err.Error() + " (set --token or REPORTCTL_TOKEN)"
	case exitcode.Forbidden:
		return err.Error() + " (the token is valid but lacks the scope named; ask for one that has it)"
	case exitcode.Interrupted:
		return "interrupted"
	}
	return err.Error()
}
