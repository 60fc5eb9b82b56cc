package daemon

import (
	"github.com/reportd/reportd/internal/badge"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
)

// badgesHTTP is the badges section as httpapi takes it.
func badgesHTTP(b config.BadgesConfig) httpapi.Badges {
	return httpapi.Badges{
		Thresholds: &badge.Thresholds{Red: float64(b.CoverageRed), Yellow: float64(b.CoverageYellow)},
		MaxAge:     b.MaxAge,
	}
}
