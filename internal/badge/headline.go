package badge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Thresholds colour a coverage figure: below Red is red, below Yellow
// yellow, else bright green (settings badges.coverage_red and
// badges.coverage_yellow).
type Thresholds struct {
	Red, Yellow float64
}

// DefaultThresholds are the settings' defaults.
var DefaultThresholds = Thresholds{Red: 50, Yellow: 80}

// For is the badge of report r at time now: its line coverage when known
// (label "coverage"), else its test counts (label "tests": red when a test
// failed, yellow when none failed but some passed only on a retry, i.e.
// were flaky), else its age
// (label: the report's name). A label, when not empty, replaces the
// default one.
func For(r report.Report, now time.Time, th Thresholds, label string) Badge {
	b := headline(r, now, th)
	if label != "" {
		b.Label = label
	}
	return b
}

func headline(r report.Report, now time.Time, th Thresholds) Badge {
	s := r.Summary
	switch {
	case s != nil && s.Lines != nil:
		v := *s.Lines
		color := "brightgreen"
		switch {
		case v < th.Red:
			color = "red"
		case v < th.Yellow:
			color = "yellow"
		}
		return Badge{Label: "coverage", Message: strconv.FormatFloat(float64(int64(v*100+0.5))/100, 'f', -1, 64) + "%", Color: color}
	case s != nil && (s.Passed != nil || s.Failed != nil):
		passed, failed, skipped, flaky := val(s.Passed), val(s.Failed), val(s.Skipped), val(s.Flaky)
		parts := []string{fmt.Sprintf("%d passed", passed)}
		color := "brightgreen"
		if failed > 0 {
			parts = append(parts, fmt.Sprintf("%d failed", failed))
			color = "red"
		}
		if skipped > 0 {
			parts = append(parts, fmt.Sprintf("%d skipped", skipped))
		}
		if flaky > 0 {
			// Flaky tests are counted in passed or failed already.
			parts = append(parts, fmt.Sprintf("%d flaky", flaky))
			if failed == 0 {
				color = "yellow"
			}
		}
		if passed+failed == 0 {
			color = "lightgrey"
		}
		return Badge{Label: "tests", Message: strings.Join(parts, ", "), Color: color}
	}
	return Badge{Label: r.Name, Message: Age(r.UploadTime.Time, now), Color: "blue"}
}

// Missing is the badge of a report that does not exist: grey, still an
// image, so that a README shows it rather than a broken picture.
func Missing(label, message string) Badge {
	if label == "" {
		label = "report"
	}
	return Badge{Label: label, Message: message, Color: "lightgrey", IsError: true}
}

// Age says how long ago t was: "just now", "5 minutes ago", "3 hours
// ago", "12 days ago", then the date.
func Age(t, now time.Time) string {
	d := now.Sub(t)
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return strconv.FormatInt(n, 10) + " " + unit + "s ago"
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int64(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int64(d/time.Hour), "hour")
	case d < 60*24*time.Hour:
		return plural(int64(d/(24*time.Hour)), "day")
	}
	return t.Format("2006-01-02")
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// Endpoint is the shields.io endpoint JSON of b
// (https://shields.io/badges/endpoint-badge).
func (b Badge) Endpoint() []byte {
	out, _ := json.Marshal(struct {
		SchemaVersion int    `json:"schemaVersion"`
		Label         string `json:"label"`
		Message       string `json:"message"`
		Color         string `json:"color"`
		IsError       bool   `json:"isError,omitempty"`
	}{1, b.Label, b.Message, b.Color, b.IsError})
	return out
}
