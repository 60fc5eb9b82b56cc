package daemon

import "github.com/prometheus/client_golang/prometheus"

// siteIngestMetrics counts how stored sites were read
// (service.Config.OnSiteIngest): as they arrived, or from the staged copy
// and why, so an operator sees when uploads miss the fast path.
func siteIngestMetrics(reg prometheus.Registerer) func(path, reason string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reportd_site_ingests_total",
		Help: "Sites stored, by how they were read: path streamed (as the upload arrived) or staged (from the staged copy), with the reason for staged: busy (every streaming slot taken), refused (the streamed read failed; the copy gave the verdict), gc (a file the streamed read counted on was removed meanwhile), format (zip), parts (file parts), store (no batches: S3), undeclared (fileType=html came after the file).",
	}, []string{"path", "reason"})
	c.WithLabelValues("streamed", "")
	for _, r := range []string{"busy", "refused", "gc", "format", "parts", "store", "undeclared"} {
		c.WithLabelValues("staged", r)
	}
	reg.MustRegister(c)
	return func(path, reason string) { c.WithLabelValues(path, reason).Inc() }
}
