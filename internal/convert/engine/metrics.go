package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the conversion metrics; nil-safe: with no Registerer every method is a no-op.
type Metrics struct {
	conversions *prometheus.CounterVec   // type, result
	duration    *prometheus.HistogramVec // type
	cacheHits   prometheus.Counter
	cacheMisses prometheus.Counter
	queue       *prometheus.GaugeVec   // engine
	restarts    *prometheus.CounterVec // engine, reason
}

// NewMetrics registers the metrics with r; nil r: no metrics.
func NewMetrics(r prometheus.Registerer) (*Metrics, error) {
	if r == nil {
		return nil, nil
	}
	m := &Metrics{
		conversions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_pdf_conversions_total",
			Help: "PDF conversions by report type and result (ok, error, timeout, busy).",
		}, []string{"type", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "reportd_pdf_conversion_seconds",
			Help:    "Time to convert a report to PDF, cache misses only.",
			Buckets: []float64{.01, .025, .05, .075, .1, .15, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"type"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_pdf_cache_hits_total", Help: "PDF requests served from the cache.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_pdf_cache_misses_total", Help: "PDF requests that needed a conversion.",
		}),
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "reportd_pdf_queue_depth", Help: "Conversion jobs running or waiting, per engine.",
		}, []string{"engine"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_pdf_engine_restarts_total",
			Help: "Engine processes replaced, per engine and reason (crash, timeout, jobs, memory).",
		}, []string{"engine", "reason"}),
	}
	for _, c := range []prometheus.Collector{m.conversions, m.duration, m.cacheHits, m.cacheMisses, m.queue, m.restarts} {
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
	m.conversions.WithLabelValues(typ, result).Inc()
	if result == "ok" {
		m.duration.WithLabelValues(typ).Observe(d.Seconds())
	}
}

// Cache counts a PDF request served from the cache (hit) or not.
func (m *Metrics) Cache(hit bool) {
	if m == nil {
		return
	}
	if hit {
		m.cacheHits.Inc()
	} else {
		m.cacheMisses.Inc()
	}
}

// QueueDepth is engine's queue-depth gauge, for NewGate (nil without metrics).
func (m *Metrics) QueueDepth(engine string) func(int64) {
	if m == nil {
		return nil
	}
	g := m.queue.WithLabelValues(engine)
	return func(n int64) { g.Set(float64(n)) }
}

// Restarted counts a replaced process of engine, for reason.
func (m *Metrics) Restarted(engine, reason string) {
	if m == nil {
		return
	}
	m.restarts.WithLabelValues(engine, reason).Inc()
}

// Conversions and Restarts are the counters by their labels (tests read them).
func (m *Metrics) Conversions() *prometheus.CounterVec { return m.conversions }
func (m *Metrics) Restarts() *prometheus.CounterVec    { return m.restarts }
