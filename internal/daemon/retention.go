package daemon

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// retentionPolicy is the server-wide default policy.
func retentionPolicy(c *config.Config) report.Policy {
	return report.Policy{KeepLast: c.Retention.KeepLast, MaxAgeDays: c.Retention.MaxAgeDays,
		KeepNewestPerBranch: c.Retention.KeepNewestPerBranch}
}

// retentionMetrics counts what every prune that deleted removed (the
// sweeper's and reportctl prune's alike) and describes the last pass.
type retentionMetrics struct {
	reports, bytes prometheus.Counter
	passes         *prometheus.CounterVec // result: ok, error
	duration       prometheus.Gauge
	lastRun        prometheus.Gauge
}

func newRetentionMetrics(reg prometheus.Registerer) *retentionMetrics {
	m := &retentionMetrics{
		reports: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_retention_reports_removed_total",
			Help: "Reports removed by retention (sweeper and prune requests).",
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_retention_bytes_removed_total",
			Help: "Bytes of report files removed by retention.",
		}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_retention_passes_total",
			Help: "Retention passes that deleted (not dry runs), by result (ok, error).",
		}, []string{"result"}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "reportd_retention_last_pass_duration_seconds",
			Help: "Duration of the last retention pass.",
		}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "reportd_retention_last_pass_timestamp_seconds",
			Help: "Unix time the last retention pass ended.",
		}),
	}
	reg.MustRegister(m.reports, m.bytes, m.passes, m.duration, m.lastRun)
	return m
}

// observe is service.Config.OnPrune.
func (m *retentionMetrics) observe(res report.PruneResult, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.reports.Add(float64(len(res.Reports)))
	m.bytes.Add(float64(res.Bytes))
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.passes.WithLabelValues(result).Inc()
	m.duration.Set(took.Seconds())
	m.lastRun.Set(float64(time.Now().Unix()))
}

// sweep applies every project's policy once per interval until ctx ends,
// and returns only once no pass is running: Close must not close the
// store under a pass. A pass that finds one already running (a prune
// request) skips its turn.
func (m *Server) sweep(ctx context.Context, interval time.Duration) {
	every(ctx, interval, func() {
		_, err := m.svc.Prune(ctx, service.PruneRequest{Trigger: "sweeper"})
		if report.IsKind(err, report.Unavailable) {
			m.Log.Info("retention pass skipped: another is running")
		}
		// Other errors were logged with the pass.
	})
}
