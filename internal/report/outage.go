package report

import "errors"

// Outage returns the ServiceUnavailableError somewhere in err's chain, or
// nil. A dependency that is down (the database, the bucket) says so at the
// source; a caller that wrapped the failure as a StorageError ("cannot read
// the file") must not hide that the cause was an outage that will pass.
func Outage(err error) *Error {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return nil
		}
		if e.Kind == Unavailable {
			return e
		}
		err = e.Err
	}
	return nil
}
