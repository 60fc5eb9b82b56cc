package report

import (
	"testing"
	"unicode"

	"golang.org/x/text/unicode/runenames"
)

// The format characters' own table holds Unicode's names (checked against
// x/text's full table, which only this test links) and only format
// characters.
func TestFormatNamesAreUnicodes(t *testing.T) {
	for r, name := range formatNames {
		if !unicode.Is(unicode.Cf, r) {
			t.Errorf("U+%04X is not a format character", r)
		}
		if want := runenames.Name(r); name != want {
			t.Errorf("U+%04X is named %q, Unicode says %q", r, name, want)
		}
	}
}
