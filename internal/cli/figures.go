package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// coverageText is a line coverage figure as "87.25%", or "" when unknown.
func coverageText(s *report.Summary) string {
	if s == nil || s.Lines == nil {
		return ""
	}
	return strconv.FormatFloat(float64(int64(*s.Lines*100+0.5))/100, 'f', -1, 64) + "%"
}

// countText is a test count, or "" when unknown.
func countText(n *int64) string {
	if n == nil {
		return ""
	}
	return itoa(*n)
}

// figuresText is what the server detected in one line, e.g.
// "coverage.py: 87.25% lines" or "playwright: 12 passed, 1 failed, 1 flaky",
// or "" when it recognised nothing.
func figuresText(generator string, s *report.Summary) string {
	var parts []string
	if c := coverageText(s); c != "" {
		parts = append(parts, c+" lines")
	}
	if s != nil {
		for _, f := range []struct {
			n    *int64
			word string
		}{{s.Passed, "passed"}, {s.Failed, "failed"}, {s.Skipped, "skipped"}, {s.Flaky, "flaky"}} {
			if f.n != nil {
				parts = append(parts, fmt.Sprintf("%d %s", *f.n, f.word))
			}
		}
	}
	text := strings.Join(parts, ", ")
	switch {
	case generator == "":
		return text
	case text == "":
		return generator
	}
	return generator + ": " + text
}

// figureFields are the detected figures as printFields pairs, "-" when unknown.
func figureFields(r report.Report) []string {
	s := r.Summary
	if s == nil {
		s = &report.Summary{}
	}
	cov := coverageText(s)
	counts := make([]string, 4)
	for i, n := range []*int64{s.Passed, s.Failed, s.Skipped, s.Flaky} {
		counts[i] = countText(n)
	}
	return []string{
		"generator", orDash(&r.Generator),
		"coverage", orDash(&cov),
		"passed", orDash(&counts[0]),
		"failed", orDash(&counts[1]),
		"skipped", orDash(&counts[2]),
		"flaky", orDash(&counts[3]),
	}
}
