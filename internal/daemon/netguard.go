package daemon

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/netguard"
)

// guardOptions are the guard of one listener ("api" or "content").
func guardOptions(c *config.Config, listener string, log *slog.Logger) netguard.Options {
	proxies, _ := c.ProxyPrefixes()          // validated at load
	status := http.StatusInternalServerError // spec mode: every error is a 500
	if c.ErrorStatus == "conventional" {
		status = http.StatusServiceUnavailable
	}
	return netguard.Options{
		MaxConns:       c.MaxConnections,
		PerClient:      c.MaxConnectionsPerClient,
		TrustedProxies: proxies,
		MinRate:        int64(c.DownloadMinRate),
		Grace:          c.DownloadRateGrace,
		Idle:           c.DownloadIdleTimeout,
		WriteTimeout:   c.WriteTimeout,
		Status:         status,
		Listener:       listener,
		Log:            log,
	}
}

// guardCollector exports the listeners' guard counters to Prometheus.
type guardCollector struct{ guards map[string]*netguard.Guard }

var (
	guardOpenDesc = prometheus.NewDesc("reportd_connections_open", "Connections being served, by listener.", []string{"listener"}, nil)
	guardBusyDesc = prometheus.NewDesc("reportd_connections_refused_total",
		"Connections and requests answered ServiceUnavailableError because max_connections or max_connections_per_client was full, by listener.", []string{"listener"}, nil)
	guardDisplacedDesc = prometheus.NewDesc("reportd_connections_displaced_total",
		"Connections stalled on their client closed to make room for a new one at the cap, by listener.", []string{"listener"}, nil)
	guardCutDesc = prometheus.NewDesc("reportd_responses_cut_total",
		"Responses cut because their client read them too slowly (download_min_rate, download_idle_timeout, write_timeout), by listener.", []string{"listener"}, nil)
)

func (g guardCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- guardOpenDesc
	ch <- guardBusyDesc
	ch <- guardDisplacedDesc
	ch <- guardCutDesc
}

func (g guardCollector) Collect(ch chan<- prometheus.Metric) {
	for name, guard := range g.guards {
		if guard == nil {
			continue
		}
		st := guard.Stats()
		ch <- prometheus.MustNewConstMetric(guardOpenDesc, prometheus.GaugeValue, float64(st.Open), name)
		ch <- prometheus.MustNewConstMetric(guardBusyDesc, prometheus.CounterValue, float64(st.Refused), name)
		ch <- prometheus.MustNewConstMetric(guardDisplacedDesc, prometheus.CounterValue, float64(st.Evicted), name)
		ch <- prometheus.MustNewConstMetric(guardCutDesc, prometheus.CounterValue, float64(st.Cut), name)
	}
}
