package prfeedback

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Gate kinds.
const (
	GateCoverage    = "coverage"     // --fail-under coverage=N: line coverage below N percent
	GateFailures    = "failures"     // --fail-on failures: any failed test
	GateNewFailures = "new-failures" // --fail-on new-failures: a test failing that passed (or did not exist) in the base
)

// Gate is one quality gate of upload: --fail-under or --fail-on.
type Gate struct {
	Kind string
	Min  float64 // GateCoverage's threshold in percent
}

func (g Gate) String() string {
	if g.Kind == GateCoverage {
		return "coverage ≥ " + pct(g.Min)
	}
	return "no " + g.Kind
}

// ParseFailUnder reads --fail-under's METRIC=N (coverage=80; "lines" is
// accepted for coverage).
func ParseFailUnder(s string) (Gate, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.ToLower(strings.TrimSpace(k))
	if !ok || (k != "coverage" && k != "lines") {
		return Gate{}, fmt.Errorf("--fail-under %q: want coverage=PERCENT, e.g. coverage=80", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil || n < 0 || n > 100 {
		return Gate{}, fmt.Errorf("--fail-under %q: the threshold must be a percentage from 0 to 100", s)
	}
	return Gate{Kind: GateCoverage, Min: n}, nil
}

// ParseFailOn reads --fail-on's failures or new-failures.
func ParseFailOn(s string) (Gate, error) {
	switch k := strings.ToLower(strings.TrimSpace(s)); k {
	case GateFailures, GateNewFailures:
		return Gate{Kind: k}, nil
	}
	return Gate{}, fmt.Errorf("--fail-on %q: want failures or new-failures", s)
}

// GateResult is one gate checked against one report (in upload's --json
// under "gates").
type GateResult struct {
	Gate    string `json:"gate"` // e.g. "coverage ≥ 80%", "no new-failures"
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
}

// CheckGates checks gates against one report's figures and, for
// new-failures, its comparison with the base (nil when there is none or it
// could not be had: then every failure counts as new, so a gate never
// passes for want of data). A gate whose figure the report lacks (coverage
// of a test report) is left out; Unchecked reports a gate no report
// could be checked against.
func CheckGates(gates []Gate, s *report.Summary, cmp *report.Comparison) []GateResult {
	var out []GateResult
	for _, g := range gates {
		switch g.Kind {
		case GateCoverage:
			if s == nil || s.Lines == nil {
				continue
			}
			ok := *s.Lines >= g.Min
			out = append(out, GateResult{Gate: g.String(), Passed: ok, Message: fmt.Sprintf("coverage %s %s %s", pct(*s.Lines), map[bool]string{true: "≥", false: "<"}[ok], pct(g.Min))})
		case GateFailures:
			if s == nil || s.Failed == nil {
				continue
			}
			out = append(out, GateResult{Gate: g.String(), Passed: *s.Failed == 0, Message: fmt.Sprintf("%d failed", *s.Failed)})
		case GateNewFailures:
			if cmp != nil && cmp.Base != nil {
				n := len(cmp.NewFailures)
				out = append(out, GateResult{Gate: g.String(), Passed: n == 0, Message: fmt.Sprintf("%d new failure(s) against report %d", n, cmp.Base.ReportID)})
				continue
			}
			if s == nil || s.Failed == nil {
				continue
			}
			out = append(out, GateResult{Gate: g.String(), Passed: *s.Failed == 0, Message: fmt.Sprintf("%d failed, no base report to compare with: every failure counts as new", *s.Failed)})
		}
	}
	return out
}

// Unchecked returns a failed result for each gate that none of the
// reports' results mention: a gate asked for must be met, not skipped.
func Unchecked(gates []Gate, results [][]GateResult) []GateResult {
	var out []GateResult
	for _, g := range gates {
		seen := false
		for _, rs := range results {
			for _, r := range rs {
				seen = seen || r.Gate == g.String()
			}
		}
		if !seen {
			what := "a coverage figure"
			if g.Kind != GateCoverage {
				what = "test results"
			}
			out = append(out, GateResult{Gate: g.String(), Passed: false, Message: "no uploaded report has " + what})
		}
	}
	return out
}

// AllPassed reports whether every result passed.
func AllPassed(rs []GateResult) bool {
	for _, r := range rs {
		if !r.Passed {
			return false
		}
	}
	return true
}

// pct is a percentage with at most two decimals: "87.25%".
func pct(f float64) string {
	return strconv.FormatFloat(float64(int64(f*100+0.5))/100, 'f', -1, 64) + "%"
}
