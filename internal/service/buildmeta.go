package service

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/report"
)

// Lengths of the build metadata, in characters.
const (
	maxReportNameLen = report.MaxNameLen
	maxBranchLen     = 255
	maxCommitLen     = 100
	maxBuildURLLen   = 2048
	maxBuildIDLen    = 100
)

// checkBuildMeta trims and validates an upload's or update's build
// metadata in place. A given "" stays "" (an update clears the field).
func checkBuildMeta(m *report.BuildMeta) error {
	checks := []struct {
		field string
		v     *string
		max   int
	}{
		{"name", m.Name, maxReportNameLen},
		{"branch", m.Branch, maxBranchLen},
		{"commit", m.Commit, maxCommitLen},
		{"buildUrl", m.BuildURL, maxBuildURLLen},
		{"buildId", m.BuildID, maxBuildIDLen},
	}
	for _, c := range checks {
		if c.v == nil {
			continue
		}
		*c.v = strings.TrimSpace(*c.v)
		if err := checkMetaText(c.field, *c.v, c.max); err != nil {
			return err
		}
	}
	if m.BuildURL != nil && *m.BuildURL != "" {
		u, err := url.Parse(*m.BuildURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return report.Errorf(report.Validation, "buildUrl must be an absolute http or https URL (got %q)", *m.BuildURL)
		}
	}
	return nil
}

// checkMetaText applies the file name's rules (valid UTF-8, no control or
// invisible format characters) and a length limit to one field.
func checkMetaText(field, v string, max int) error {
	switch {
	case !utf8.ValidString(v):
		return report.Errorf(report.Validation, "%s is not valid UTF-8", field)
	case utf8.RuneCountInString(v) > max:
		return report.Errorf(report.Validation, "%s is longer than %d characters", field, max)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return report.Errorf(report.Validation, "%s contains control characters", field)
		}
	}
	return checkVisible(field, v)
}

// checkQueryMeta refuses the report name or branch of a query (history,
// compare's base, stable links, badges) that no report can have because
// an upload would be refused it: invalid UTF-8, NUL and over-long values
// among them, which PostgreSQL would fail on rather than match nothing.
func checkQueryMeta(name, branch *string) error {
	if name != nil {
		if err := checkQueryText("name", *name, maxReportNameLen); err != nil {
			return err
		}
	}
	if branch != nil {
		return checkQueryText("branch", *branch, maxBranchLen)
	}
	return nil
}

func checkQueryText(field, v string, max int) error {
	switch {
	case !utf8.ValidString(v):
		return report.Errorf(report.Validation, "%s is not valid UTF-8", field)
	case strings.IndexByte(v, 0) >= 0:
		return report.Errorf(report.Validation, "%s contains a NUL character", field)
	case utf8.RuneCountInString(v) > max:
		return report.Errorf(report.Validation, "%s is longer than %d characters", field, max)
	}
	return nil
}

// metaFilter reports whether r matches f's name and branch.
func metaFilter(r *report.Report, f report.ReportFilter) bool {
	if f.Name != "" && r.Name != f.Name {
		return false
	}
	if f.Branch != "" && (r.Branch == nil || *r.Branch != f.Branch) {
		return false
	}
	return true
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}
