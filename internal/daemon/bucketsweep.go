package daemon

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/bucketsweep"
	"github.com/reportd/reportd/internal/service"
)

// openBucketSweep builds the bucket sweep of storage: postgres+s3 on the
// open PostgreSQL store and bucket; extra are more steps for the same pass
// (Server.SweepSteps).
func (m *Server) openBucketSweep(st *s3store.Store, extra []bucketsweep.Step) error {
	sw, err := bucketsweep.New(bucketsweep.Config{
		Store:      st,
		Refs:       m.store.(bucketsweep.Refs), // metadata_store: postgres (stores.go refuses bolt with s3)
		Locker:     m.store.(bucketsweep.Locker),
		Grace:      m.Config.Sweep.Grace,
		AbortStale: st.AbortStale,
		Steps:      extra,
		PDFPrefix:  service.PDFPrefix,
		Log:        m.Log,
		Registerer: m.Metrics.Registry,
	})
	if err != nil {
		return err
	}
	m.bucketSweep = sw
	return nil
}

// sweepSites is the bucket sweep's step for report sites: manifests no
// row owns (older than sweep.grace), then the content objects no manifest
// references (site GC).
func (m *Server) sweepSites(ctx context.Context) error {
	_, _, err := m.svc.SweepSites(ctx, m.Config.Sweep.Grace)
	return err
}

// runBucketSweep sweeps the bucket every sweep.interval (first pass soon
// after start-up) until ctx ends; it returns at once without a bucket or
// with sweep.interval 0.
func (m *Server) runBucketSweep(ctx context.Context) {
	if m.bucketSweep == nil || m.Config.Sweep.Interval <= 0 {
		return
	}
	m.bucketSweep.Loop(ctx, m.Config.Sweep.Interval)
}

// sharedPDFMetrics counts the shared PDF cache of storage: postgres+s3
// (service.Config.OnSharedPDF): hit and miss per request, converted per
// PDF this replica wrote into the bucket.
func sharedPDFMetrics(reg prometheus.Registerer) func(result string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reportd_pdf_shared_cache_total",
		Help: "Shared PDF cache in the bucket (storage: postgres+s3): requests that found the PDF (hit) or not (miss) at first look, and PDFs this replica converted into it (converted).",
	}, []string{"result"})
	for _, r := range []string{"hit", "miss", "converted"} {
		c.WithLabelValues(r)
	}
	reg.MustRegister(c)
	return func(result string) { c.WithLabelValues(result).Inc() }
}
