package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the conversion metrics (names and labels are the API of
// dashboards: keep them). Metrics is nil-safe: with no Registerer every method is a no-op.
type Metrics struct {
	Conversions *prometheus.CounterVec   // type, result
	Duration    *prometheus.HistogramVec // type
	CacheHits   prometheus.Counter
	CacheMisses prometheus.Counter
	Queue       *prometheus.GaugeVec   // engine
	Restarts    *prometheus.CounterVec // engine, reason
}

// NewMetrics registers the metrics with r; nil r: no metrics.
func NewMetrics(r prometheus.Registerer) (*Metrics, error) {
	if r == nil {
		return nil, nil
	}
	m := &Metrics{
		Conversions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_pdf_conversions_total",
			Help: "PDF conversions by report type and result (ok, error, timeout, busy).",
		}, []string{"type", "result"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "reportd_pdf_conversion_seconds",
			Help:    "Time to convert a report to PDF, cache misses only.",
			Buckets: []float64{.01, .025, .05, .075, .1, .15, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"type"}),
		CacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_pdf_cache_hits_total", Help: "PDF requests served from the cache.",
		}),
		CacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_pdf_cache_misses_total", Help: "PDF requests that needed a conversion.",
		}),
		Queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "reportd_pdf_queue_depth", Help: "Conversion jobs running or waiting, per engine.",
		}, []string{"engine"}),
		Restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_pdf_engine_restarts_total",
			Help: "Engine processes replaced, per engine and reason (crash, timeout, jobs, memory).",
		}, []string{"engine", "reason"}),
	}
	for _, c := range []prometheus.Collector{m.Conversions, m.Duration, m.CacheHits, m.CacheMisses, m.Queue, m.Restarts} {
		if err := r.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Converted counts a conversion of type typ with result, timing an ok one.
func (m *Metrics) Converted(typ, result string, d time.Duration) {
	if m == nil {
		return
	}
	m.Conversions.WithLabelValues(typ, result).Inc()
	if result == "ok" {
		m.Duration.WithLabelValues(typ).Observe(d.Seconds())
	}
}

// Cache counts a PDF request served from the cache (hit) or not.
func (m *Metrics) Cache(hit bool) {
	if m == nil {
		return
	}
	if hit {
		m.CacheHits.Inc()
	} else {
		m.CacheMisses.Inc()
	}
}

// QueueDepth is the queue-depth gauge of engine, for NewGate (nil without metrics).
func (m *Metrics) QueueDepth(engine string) func(int64) {
	if m == nil {
		return nil
	}
	g := m.Queue.WithLabelValues(engine)
	return func(n int64) { g.Set(float64(n)) }
}

// Restarted counts a replaced process of engine, for reason.
func (m *Metrics) Restarted(engine, reason string) {
	if m == nil {
		return
	}
	m.Restarts.WithLabelValues(engine, reason).Inc()
}
