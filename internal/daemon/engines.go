package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/service"
)

// ConvertConfig is the `convert:` section: the PDF engines and their cache.
type ConvertConfig struct {
	Paper            string        `mapstructure:"paper"`
	AllowNetwork     bool          `mapstructure:"allow_network"`
	ScriptWait       time.Duration `mapstructure:"script_wait"`
	ChromiumPath     string        `mapstructure:"chromium_path"`
	SofficePath      string        `mapstructure:"soffice_path"`
	PythonPath       string        `mapstructure:"python_path"`
	OfficeWorkers    int           `mapstructure:"office_workers"`
	ChromiumTabs     int           `mapstructure:"chromium_tabs"`
	JobTimeout       time.Duration `mapstructure:"job_timeout"`
	MaxJobsPerWorker int           `mapstructure:"max_jobs_per_worker"`
	MaxWorkerRSS     ByteSize      `mapstructure:"max_worker_rss"`
	QueueSize        int           `mapstructure:"queue_size"`
	CacheMaxBytes    ByteSize      `mapstructure:"cache_max_bytes"`
	DeckMaxBytes     ByteSize      `mapstructure:"deck_max_bytes"`
	FailureTTL       time.Duration `mapstructure:"failure_ttl"`
	WarmOnStart      bool          `mapstructure:"warm_on_start"`
}

// convertDefaults: zero means "the engine's default" (convert.DefaultConfig).
var convertDefaults = map[string]any{
	"convert.paper":               "A4",
	"convert.allow_network":       false,
	"convert.script_wait":         "1s",
	"convert.chromium_path":       "",
	"convert.soffice_path":        "soffice",
	"convert.python_path":         "/usr/bin/python3",
	"convert.office_workers":      0,
	"convert.chromium_tabs":       0,
	"convert.job_timeout":         "60s",
	"convert.max_jobs_per_worker": 200,
	"convert.max_worker_rss":      "1GiB",
	"convert.queue_size":          32,
	"convert.cache_max_bytes":     "1GiB",
	"convert.deck_max_bytes":      "512MiB",
	"convert.failure_ttl":         "2m",
	"convert.warm_on_start":       true,
}

func init() {
	for k, v := range convertDefaults {
		defaults[k] = v
	}
}

// newEngines builds the converter; it starts no process (Start does, in
// the background, so readiness never waits for Chromium or LibreOffice).
func newEngines(c Config, reg prometheus.Registerer, log *slog.Logger) (*convert.Manager, error) {
	cc := c.Convert
	return convert.New(convert.Config{
		Paper:            cc.Paper,
		AllowNetwork:     cc.AllowNetwork,
		ScriptWait:       cc.ScriptWait,
		ChromiumPath:     cc.ChromiumPath,
		SofficePath:      cc.SofficePath,
		PythonPath:       cc.PythonPath,
		OfficeWorkers:    cc.OfficeWorkers,
		ChromiumTabs:     cc.ChromiumTabs,
		JobTimeout:       cc.JobTimeout,
		MaxJobsPerWorker: cc.MaxJobsPerWorker,
		MaxWorkerRSS:     int64(cc.MaxWorkerRSS),
		QueueSize:        cc.QueueSize,
		CacheDir:         filepath.Join(c.DataDir, "cache", "pdf"),
		CacheMaxBytes:    int64(cc.CacheMaxBytes),
		DeckMaxBytes:     int64(cc.DeckMaxBytes),
		FailureTTL:       cc.FailureTTL,
		Registerer:       reg,
		Logger:           log,
	})
}

// engines adapts convert.Manager to the service's Converter.
type engines struct{ m *convert.Manager }

func (e engines) job(j service.PDFJob) convert.Job {
	return convert.Job{ReportID: j.ReportID, ProjectID: j.ProjectID, Type: j.Type, Src: j.Src, ContentKey: j.ContentKey}
}

func (e engines) PDF(ctx context.Context, j service.PDFJob) (*os.File, error) {
	return e.m.PDF(ctx, e.job(j))
}
func (e engines) Prepare(j service.PDFJob)    { e.m.Prepare(e.job(j)) }
func (e engines) Forget(reportID int64) error { return e.m.Forget(reportID) }
