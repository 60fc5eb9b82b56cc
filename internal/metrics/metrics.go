// Package metrics is reportd's Prometheus registry: HTTP request and
// upload metrics (as an httpapi.Observer), the store's size, and whatever
// other packages (the PDF converter) register on the same registry.
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/reportd/reportd/internal/httpapi"
)

// Metrics owns one registry; pass Registry to every package that registers
// its own collectors, and serve Handler at /metrics.
type Metrics struct {
	Registry *prometheus.Registry

	requests *prometheus.CounterVec   // route, status, class
	errors   *prometheus.CounterVec   // route, type
	duration *prometheus.HistogramVec // route
	respSize *prometheus.CounterVec   // route
	uploads  prometheus.Counter
	upBytes  prometheus.Counter
}

// New creates the registry with the Go runtime and process collectors and
// the request metrics.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_http_requests_total",
			Help: "HTTP requests by route pattern, status code and class (ok, client_error, server_error).",
		}, []string{"route", "status", "class"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_http_errors_total",
			Help: "HTTP requests answered with an API error, by route pattern and error type.",
		}, []string{"route", "type"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "reportd_http_request_duration_seconds",
			Help:    "Time from request start to the last byte of the response, by route pattern.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"route"}),
		respSize: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_http_response_bytes_total",
			Help: "Response body bytes sent, by route pattern.",
		}, []string{"route"}),
		uploads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_uploads_total",
			Help: "Report files received and staged (before validation).",
		}),
		upBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reportd_upload_bytes_total",
			Help: "Bytes of report files received and staged.",
		}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.errors, m.duration, m.respSize, m.uploads, m.upBytes,
	)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveRequest implements httpapi.Observer. route is the mux pattern
// ("GET /api/reports/{id}"), never the raw path, so label cardinality stays
// bounded no matter what clients send.
// The class and the error type come from the {error,type} body the
// request was answered with, so they mean the same in either status mode.
func (m *Metrics) ObserveRequest(r httpapi.Request) {
	m.requests.WithLabelValues(r.Route, strconv.Itoa(r.Status), string(r.Class)).Inc()
	if r.ErrorType != "" {
		m.errors.WithLabelValues(r.Route, string(r.ErrorType)).Inc()
	}
	m.duration.WithLabelValues(r.Route).Observe(r.Seconds)
	m.respSize.WithLabelValues(r.Route).Add(float64(r.Bytes))
}

// ObserveUpload implements httpapi.Observer.
func (m *Metrics) ObserveUpload(bytes int64) {
	m.uploads.Inc()
	m.upBytes.Add(float64(bytes))
}
