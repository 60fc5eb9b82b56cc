package daemon

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/netguard"
)

// validateGuard checks the connection and response-pacing keys.
func (c *Config) validateGuard() error {
	if c.DownloadMinRate > 0 && c.DownloadRateGrace <= 0 {
		return fmt.Errorf("download_rate_grace must be positive when download_min_rate is set (every response starts at 0 bytes/s)")
	}
	if c.DownloadRateGrace < 0 || c.DownloadIdleTimeout < 0 || c.WriteTimeout < 0 {
		return fmt.Errorf("download_rate_grace, download_idle_timeout and write_timeout must not be negative")
	}
	if c.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("max_connections_per_client must be 0 (no limit) or more, not %d", c.MaxConnectionsPerClient)
	}
	_, err := c.trustedProxies()
	return err
}

// trustedProxies parses trusted_proxies: addresses and CIDR prefixes.
func (c *Config) trustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, w := range c.TrustedProxies {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if p, err := netip.ParsePrefix(w); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(w)
		if err != nil {
			return nil, fmt.Errorf("trusted_proxies: %q is neither an IP address nor a CIDR prefix (want e.g. 10.0.0.5 or 10.0.0.0/8)", w)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// guardOptions are the guard of one listener ("api" or "content").
func (c *Config) guardOptions(listener string, log *slog.Logger) netguard.Options {
	proxies, _ := c.trustedProxies()         // validated at load
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
