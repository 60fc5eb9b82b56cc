package report

import (
	"path"
	"strings"
)

// NameFromFile derives a report's stable name from its file name: the
// base name without its extension, lower-cased, with every character
// outside [a-z0-9._-] turned into '-' ("Coverage Report.html" is
// "coverage-report"). A name left empty is "report"; a longer one is cut
// at MaxNameLen.
func NameFromFile(fileName string) string {
	base := path.Base(strings.ReplaceAll(fileName, "\\", "/"))
	base = strings.TrimSuffix(base, path.Ext(base))
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	n := b.String()
	if len(n) > MaxNameLen {
		n = n[:MaxNameLen]
	}
	if n != "" && n != "." && n != ".." {
		return n
	}
	return "report"
}

// MaxNameLen is the longest report name, in characters.
const MaxNameLen = 100
