package config

import (
	"fmt"
	"strconv"
	"time"
)

// BadgesConfig is the badges section of reportd.yaml (docs/links.md).
type BadgesConfig struct {
	CoverageRed    int // percent
	CoverageYellow int // percent
	MaxAge         time.Duration
}

func (b BadgesConfig) validate() error {
	if b.CoverageRed > b.CoverageYellow {
		return fmt.Errorf("badges.coverage_red (%d) is above badges.coverage_yellow (%d)", b.CoverageRed, b.CoverageYellow)
	}
	return nil
}

// percent is a whole percentage, 0 to 100.
func percent(get func(*Config) *int) kind {
	return field[int]{get: get, parse: func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 100 {
			return 0, fmt.Errorf("must be a whole percentage from 0 to 100, not %q", s)
		}
		return n, nil
	}, show: strconv.Itoa}
}
