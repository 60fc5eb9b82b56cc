package report

import (
	"strings"
	"testing"
)

func TestNameFromFile(t *testing.T) {
	for in, want := range map[string]string{
		"coverage.html":                   "coverage",
		"Coverage Report.HTML":            "coverage-report",
		"build/out/e2e_results.md":        "e2e_results",
		`C:\ci\Lighthouse (1).pdf`:        "lighthouse-1",
		"--Nightly  Run--.html":           "nightly-run",
		"Отчёт о покрытии.md":             "отчёт-о-покрытии",
		"测试报告.html":                       "测试报告",
		"(((.pdf":                         "report",
		"v1.2-release.notes.pptx":         "v1.2-release.notes",
		"résumé.md":                       "résumé",
		strings.Repeat("é", 150) + ".md":  strings.Repeat("é", 100),
		strings.Repeat("a", 99) + " b.md": strings.Repeat("a", 99),
		".html":                           "report",
		"...md":                           "report",
		strings.Repeat("a", 250) + ".md":  strings.Repeat("a", 100),
	} {
		if got := NameFromFile(in); got != want {
			t.Errorf("NameFromFile(%q) = %q, want %q", in, got, want)
		}
	}
}
