package daemon

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/convert"
)

// newEngines builds the converter; it starts no process (Start does, in
// the background, so readiness never waits for Chromium or LibreOffice).
func newEngines(c config.Config, reg prometheus.Registerer, log *slog.Logger) (*convert.Manager, error) {
	cc := c.Convert
	return convert.New(convert.Config{
		Paper:                cc.Paper,
		AllowNetwork:         cc.AllowNetwork,
		ScriptWait:           cc.ScriptWait,
		ChromiumPath:         cc.ChromiumPath,
		SofficePath:          cc.SofficePath,
		PythonPath:           cc.PythonPath,
		BwrapPath:            cc.BwrapPath,
		Unsandboxed:          cc.Unsandboxed,
		OfficeWorkers:        cc.OfficeWorkers,
		ChromiumTabs:         cc.ChromiumTabs,
		ChromiumSpares:       cc.ChromiumSpares,
		JobTimeout:           cc.JobTimeout,
		MaxJobsPerWorker:     cc.MaxJobsPerWorker,
		MaxWorkerRSS:         int64(cc.MaxWorkerRSS),
		QueueSize:            cc.QueueSize,
		CacheDir:             filepath.Join(c.DataDir, "cache", "pdf"),
		HideDirs:             []string{c.DataDir},
		CacheMaxBytes:        int64(cc.CacheMaxBytes),
		MaxVariantsPerReport: maxVariants(cc.MaxVariantsPerReport),
		SiteMaxPages:         cc.SiteMaxPages,
		SiteTimeout:          cc.SiteTimeout,
		DeckMaxBytes:         int64(cc.DeckMaxBytes),
		SmallDeckBytes:       smallDecks(cc.SmallDeckBytes),
		FailureTTL:           failureTTL(cc.FailureTTL),
		Registerer:           reg,
		Logger:               log,
	})
}

// failureTTL maps the config's "0s: never remember failures" onto the
// engine's convention, where zero means its default.
func failureTTL(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// maxVariants maps convert.max_variants_per_report onto the engine's
// setting: 0 means no cap (the engine's 0 means its default).
func maxVariants(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// smallDecks maps convert.small_deck_bytes to the engine's setting: 0B
// means no small-deck lane (the engine's 0 means its default).
func smallDecks(n config.ByteSize) int64 {
	if n == 0 {
		return -1
	}
	return int64(n)
}
