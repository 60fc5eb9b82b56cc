package report

import (
	"strings"
	"testing"
)

func TestNameFromFile(t *testing.T) {
	for in, want := range map[string]string{
		"coverage.html":                  "coverage",
		"Coverage Report.HTML":           "coverage-report",
		"build/out/e2e_results.md":       "e2e_results",
		`C:\ci\Lighthouse (1).pdf`:       "lighthouse--1-",
		"v1.2-release.notes.pptx":        "v1.2-release.notes",
		"résumé.md":                      "r-sum-",
		".html":                          "report",
		"...md":                          "report",
		strings.Repeat("a", 250) + ".md": strings.Repeat("a", 100),
	} {
		if got := NameFromFile(in); got != want {
			t.Errorf("NameFromFile(%q) = %q, want %q", in, got, want)
		}
	}
}
