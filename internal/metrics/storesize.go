package metrics

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StoreSize reports the bbolt file's size and the bytes below uploads/.
// Walking uploads/ costs a stat per file, so the walk runs at most once per
// MinInterval however often Prometheus scrapes.
type StoreSize struct {
	DBPath      string
	UploadsDir  string
	MinInterval time.Duration

	mu      sync.Mutex
	at      time.Time
	uploads float64
	files   float64

	dbDesc, upDesc, filesDesc *prometheus.Desc
}

// NewStoreSize describes the gauges; register the result on the registry.
func NewStoreSize(dbPath, uploadsDir string) *StoreSize {
	return &StoreSize{
		DBPath: dbPath, UploadsDir: uploadsDir, MinInterval: 30 * time.Second,
		dbDesc:    prometheus.NewDesc("reportd_store_db_bytes", "Size of the bbolt metadata file.", nil, nil),
		upDesc:    prometheus.NewDesc("reportd_store_uploads_bytes", "Bytes of report and cover files below uploads/.", nil, nil),
		filesDesc: prometheus.NewDesc("reportd_store_uploads_files", "Number of files below uploads/.", nil, nil),
	}
}

func (s *StoreSize) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.dbDesc
	ch <- s.upDesc
	ch <- s.filesDesc
}

func (s *StoreSize) Collect(ch chan<- prometheus.Metric) {
	if fi, err := os.Stat(s.DBPath); err == nil {
		ch <- prometheus.MustNewConstMetric(s.dbDesc, prometheus.GaugeValue, float64(fi.Size()))
	}
	s.mu.Lock()
	if s.at.IsZero() || time.Since(s.at) >= s.MinInterval {
		s.uploads, s.files = walkSize(s.UploadsDir)
		s.at = time.Now()
	}
	up, n := s.uploads, s.files
	s.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(s.upDesc, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(s.filesDesc, prometheus.GaugeValue, n)
}

func walkSize(dir string) (bytes, count float64) {
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		if fi, err := e.Info(); err == nil {
			bytes += float64(fi.Size())
			count++
		}
		return nil
	})
	return bytes, count
}
