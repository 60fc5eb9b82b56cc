package daemon

import (
	"context"
	"log/slog"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// notify tells systemd (Type=notify) about a state change. Outside systemd
// NOTIFY_SOCKET is unset and this does nothing.
func notify(log *slog.Logger, state string) {
	sent, err := sd.SdNotify(false, state)
	switch {
	case err != nil:
		log.Warn("sd_notify failed", "state", state, "err", err)
	case sent:
		log.Debug("sd_notify", "state", state)
	}
}

// watchdog pings systemd at half the WatchdogSec interval while the
// process serves (live: never PostgreSQL or the bucket, whose outage must
// not get every replica killed at once), so a wedged daemon (a stuck bbolt
// lock, a full stall) is restarted by systemd instead of hanging silently.
func (m *Server) watchdog(ctx context.Context) {
	interval, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		m.Log.Warn("watchdog settings unreadable", "err", err)
		return
	}
	if interval <= 0 {
		return
	}
	m.Log.Info("systemd watchdog enabled", "interval", interval)
	every(ctx, interval/2, func() {
		if err := m.live(ctx); err != nil {
			m.Log.Error("liveness check failed; withholding the watchdog ping", "err", err)
			return
		}
		notify(m.Log, sd.SdNotifyWatchdog)
	})
}
