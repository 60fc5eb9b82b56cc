package daemon

import (
	"context"
	"log/slog"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
	bolt "go.etcd.io/bbolt"
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

// watchdog pings systemd at half the WatchdogSec interval while the store
// still answers, so a wedged daemon (a stuck bbolt lock, a full stall) is
// restarted by systemd instead of hanging silently.
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
		if err := m.healthy(); err != nil {
			m.Log.Error("health check failed; withholding the watchdog ping", "err", err)
			return
		}
		notify(m.Log, sd.SdNotifyWatchdog)
	})
}

// healthy is what the watchdog vouches for: the metadata store answers.
func (m *Server) healthy() error {
	if m.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return m.pg.Pool().Ping(ctx)
	}
	return m.bolt.DB().View(func(*bolt.Tx) error { return nil })
}
