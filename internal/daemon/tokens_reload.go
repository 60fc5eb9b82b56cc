package daemon

import (
	"context"
	"time"
)

// tokenReloadInterval is how often a daemon on PostgreSQL re-reads the
// tokens table, so that a token created or revoked through another
// replica or `reportd token` takes effect here within that time.
const tokenReloadInterval = 2 * time.Second

// reloadTokens re-reads the token set every interval until ctx is done.
// A failed read keeps the tokens as they were and is logged.
func (m *Server) reloadTokens(ctx context.Context, interval time.Duration) {
	every(ctx, interval, func() {
		if err := m.tokens.Reload(); err != nil {
			m.Log.Warn("cannot re-read the tokens table; keeping the tokens as they were", "err", err)
		}
	})
}

// every calls f once per interval, the first time one interval from now,
// until ctx is done; a call in progress delays the next.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f()
	}
}
