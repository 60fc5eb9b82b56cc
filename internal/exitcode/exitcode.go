// Package exitcode is reportctl's table of exit codes. The numbers are part of
// the CLI's contract (scripts depend on them): never renumber one.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

const (
	OK          = 0   // success
	Failed      = 1   // a request failed
	Usage       = 2   // bad flags or arguments
	Auth        = 3   // the server refused the credentials
	NoMatch     = 4   // nothing matched an upload pattern (--allow-empty makes it 0)
	Unreachable = 5   // the server could not be reached after retries
	Forbidden   = 6   // the token is valid but its scope does not cover the request
	GateFailed  = 7   // upload: a quality gate failed (--fail-under, --fail-on); the reports were published
	Interrupted = 130 // Ctrl-C / SIGINT
)

// Error carries an exit code through cobra's RunE back to main.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// With wraps err so that the process exits with code.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Of returns the exit code for err: the code it carries, Interrupted for a
// cancelled context, Failed for anything else, OK for nil.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) {
		return Interrupted
	}
	return Failed
}
