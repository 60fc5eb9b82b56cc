package engine

import "errors"

// A fault is an error that is the engine's, not the document's: the sandbox
// cannot run, an engine is missing or could not start, a worker broke or
// crashed under a job. The client sees the same ConversionError; convert's
// failure memory does not remember it, since the next request may meet a
// healthy engine (an operator fixed the install, a worker was renewed) and
// must not be refused for the TTL.
type fault struct{ err error }

func (e *fault) Error() string { return e.err.Error() }
func (e *fault) Unwrap() error { return e.err }

// Fault marks err (nil stays nil) as the engine's fault.
func Fault(err error) error {
	if err == nil {
		return nil
	}
	return &fault{err}
}

// IsFault reports whether err was marked by Fault.
func IsFault(err error) bool {
	var e *fault
	return errors.As(err, &e)
}
