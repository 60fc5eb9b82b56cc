package watch

import (
	"fmt"

	"github.com/reportd/reportd/internal/exitcode"
)

// A 401 on an upload is the same for every file and no retry fixes it:
// typically the server got its first token (reportd token create) and
// uploads now need one, or the token given was revoked. Retrying for ever
// would only fill the log with UnauthorizedError, so the run stops at the
// first one, says so, and exits with reportctl's auth status (3). The file
// and everything else queued stay in the state file's queue and are
// published by the next run, once it is given a token.

// refused ends the run on res, the first upload refused for want of a
// (valid) token.
func (r *runner) refused(res result) {
	r.retries[res.path] = retryWait{fail: unauthorized} // still queued; the run ends
	if r.authErr != nil {
		return
	}
	r.authErr = res.err
	r.log.emit(Event{Event: evError, Path: res.path, Error: res.err.Error(),
		Message: "the server refused the upload for want of a valid token: watch stops instead of retrying; " +
			"queued files stay queued and are published when watch runs again with a token (--token or REPORTCTL_TOKEN)"})
}

// authStopped is the run's error once a 401 ended it.
func (r *runner) authStopped() error {
	return exitcode.With(exitcode.Auth, fmt.Errorf("watch stopped: uploads need a valid token; files stay queued for the next run: %w", r.authErr))
}
