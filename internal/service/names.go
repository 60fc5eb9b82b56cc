package service

import (
	"fmt"
	"unicode"

	"golang.org/x/text/unicode/runenames"

	"github.com/reportd/reportd/internal/report"
)

// checkVisible refuses a name holding format characters (Unicode category
// Cf): bidi controls such as U+202E make "rep\u202elmth.pdf.html" display
// as "replmth.html.fdp"-like text that hides its real extension, and
// zero-width characters make two names that look alike differ. The error
// names the character so the user can find it.
func checkVisible(field, name string) error {
	for i, r := range name {
		if unicode.Is(unicode.Cf, r) {
			return report.Errorf(report.Validation, "%s contains the invisible format character %s at byte %d",
				field, describe(r), i)
		}
	}
	return nil
}

func describe(r rune) string {
	if n := runenames.Name(r); n != "" {
		return fmt.Sprintf("U+%04X %s", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}
