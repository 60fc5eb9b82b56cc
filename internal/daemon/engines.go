package daemon

import (
	"log/slog"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/convert"
)

// newEngines builds the converter; it starts no process (Start does, in
// the background, so readiness never waits for Chromium or LibreOffice).
func newEngines(c config.Config, reg prometheus.Registerer, log *slog.Logger) (*convert.Manager, error) {
	cc := c.Convert.Config
	cc.CacheDir = filepath.Join(c.DataDir, "cache", "pdf")
	cc.HideDirs = []string{c.DataDir}
	cc.Registerer, cc.Logger = reg, log
	return convert.New(cc)
}
