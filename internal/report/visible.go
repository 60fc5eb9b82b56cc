package report

import (
	"fmt"
	"unicode"
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
	if n := formatNames[r]; n != "" {
		return fmt.Sprintf("U+%04X %s", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}

// formatNames are the Unicode names of the format characters people meet
// in names (bidi controls, zero-width and invisible characters). A table of
// its own rather than golang.org/x/text/unicode/runenames, whose tables of
// every Unicode name would add over a megabyte to reportctl, which links
// this package; other format characters are named by code point.
var formatNames = map[rune]string{
	0x00AD: "SOFT HYPHEN", 0x061C: "ARABIC LETTER MARK", 0x180E: "MONGOLIAN VOWEL SEPARATOR",
	0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK",
	0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES",
	0x2063: "INVISIBLE SEPARATOR", 0x2064: "INVISIBLE PLUS",
	0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
	0xFFF9: "INTERLINEAR ANNOTATION ANCHOR", 0xFFFA: "INTERLINEAR ANNOTATION SEPARATOR",
	0xFFFB: "INTERLINEAR ANNOTATION TERMINATOR", 0xE0001: "LANGUAGE TAG",
}
