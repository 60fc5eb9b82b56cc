package daemon

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/config"
)

// The badges section: defaults, a percentage out of range, and red above
// yellow are refused with where the value came from.
func TestConfigBadges(t *testing.T) {
	c, err := loadArgs(t, nil, "--config", os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if c.Badges != (config.BadgesConfig{CoverageRed: 50, CoverageYellow: 80, MaxAge: time.Minute}) {
		t.Fatalf("defaults: %+v", c.Badges)
	}
	if th := badgesHTTP(c.Badges).Thresholds; th == nil || th.Red != 50 || th.Yellow != 80 {
		t.Fatalf("thresholds handed to the HTTP layer: %+v", th)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"REPORTD_BADGES_COVERAGE_RED=101"}, `REPORTD_BADGES_COVERAGE_RED="101": badges.coverage_red must be a whole percentage from 0 to 100`},
		{[]string{"REPORTD_BADGES_COVERAGE_RED=90"}, "badges.coverage_red (90) is above badges.coverage_yellow (80)"},
	} {
		_, err := loadArgs(t, tc.env, "--config", os.DevNull)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.env, err, tc.want)
		}
	}
	c, err = loadArgs(t, []string{"REPORTD_BADGES_COVERAGE_RED=0", "REPORTD_BADGES_COVERAGE_YELLOW=0", "REPORTD_BADGES_MAX_AGE=5m"}, "--config", os.DevNull)
	if err != nil || c.Badges.CoverageYellow != 0 || c.Badges.MaxAge != 5*time.Minute {
		t.Fatalf("0/0/5m: %+v %v", c.Badges, err)
	}
}
