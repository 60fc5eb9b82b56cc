package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// dependencyError is a failure to open PostgreSQL or the bucket. transient
// says it may pass on its own (no answer, a server starting up); start-up
// waits those out (startup_wait), every other one (a wrong password, key or
// bucket) needs the operator and fails at once.
type dependencyError struct {
	err       error
	transient bool
}

func (e *dependencyError) Error() string { return e.err.Error() }
func (e *dependencyError) Unwrap() error { return e.err }

func transient(err error) bool {
	var d *dependencyError
	return errors.As(err, &d) && d.transient
}

// The backoff between tries while start-up waits for a dependency.
const (
	firstStartRetry = 500 * time.Millisecond
	maxStartRetry   = 10 * time.Second
)

// waitFor calls open until it succeeds, fails for good, or until passes;
// between tries it waits with doubling backoff, logs each failure, and
// tells systemd why start-up takes long (STATUS=, and EXTEND_TIMEOUT_USEC
// so that TimeoutStartSec does not kill a daemon that waits on purpose;
// WATCHDOG=1, as the process itself is fine).
func (m *Server) waitFor(ctx context.Context, until time.Time, what string, open func() error) error {
	wait := firstStartRetry
	for try := 1; ; try++ {
		err := open()
		if err == nil {
			if try > 1 {
				m.Log.Info("dependency answers; starting", "dependency", what, "tries", try)
				notify(m.Log, "STATUS=starting")
			}
			return nil
		}
		if !transient(err) || m.Config.StartupWait <= 0 {
			return err
		}
		left := time.Until(until)
		if left <= 0 {
			return fmt.Errorf("%w (gave up after waiting %v for %s: startup_wait)", err, m.Config.StartupWait, what)
		}
		wait = min(wait, left)
		m.Log.Warn("waiting for a dependency at start-up", "dependency", what, "err", err, "retry_in", wait.Round(time.Millisecond), "gives_up_in", left.Round(time.Second))
		notify(m.Log, fmt.Sprintf("STATUS=waiting for %s (startup_wait %v)", what, m.Config.StartupWait))
		notify(m.Log, fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", (wait+30*time.Second).Microseconds()))
		notify(m.Log, sd.SdNotifyWatchdog)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (start-up cancelled while waiting for %s)", err, what)
		case <-t.C:
		}
		wait = min(2*wait, maxStartRetry)
	}
}
