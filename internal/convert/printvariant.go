package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// printVariant names the cached variant of a print: today's variant for
// the default print, so a request without options is answered as before;
// otherwise that variant plus a hash of the normalized options.
func (m *Manager) printVariant(p report.PrintOptions) string {
	if p.IsZero() {
		return m.variant
	}
	h := sha256.Sum256([]byte(p.Key()))
	return m.variant + "-" + hex.EncodeToString(h[:8])
}

// waitMax bounds waitForSelector and waitForExpression: half the job's
// deadline, so the print that follows has the other half.
func (m *Manager) waitMax() time.Duration { return m.cfg.JobTimeout / 2 }
