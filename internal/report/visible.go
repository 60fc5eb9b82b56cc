package report

import (
	"fmt"
	"unicode"

	"golang.org/x/text/unicode/runenames"
)

// FormatChar finds the first format character (Unicode category Cf) in s:
// bidi controls such as U+202E make "rep\u202elmth.pdf.html" display as
// "replmth.html.fdp"-like text that hides its real extension, and
// zero-width characters make two names that look alike differ. desc names
// the character ("U+202E RIGHT-TO-LEFT OVERRIDE"), at is its byte offset.
// It is the one rule for every name a user gives: a report's fileName and
// name, build metadata, and each file name inside a site.
func FormatChar(s string) (desc string, at int, found bool) {
	for i, r := range s {
		if unicode.Is(unicode.Cf, r) {
			return describeRune(r), i, true
		}
	}
	return "", 0, false
}

// CheckVisible refuses a value of field holding a format character, with
// a ValidationError naming the character so the user can find it.
func CheckVisible(field, s string) error {
	if desc, at, found := FormatChar(s); found {
		return Errorf(Validation, "%s contains the invisible format character %s at byte %d", field, desc, at)
	}
	return nil
}

func describeRune(r rune) string {
	if n := runenames.Name(r); n != "" {
		return fmt.Sprintf("U+%04X %s", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}
