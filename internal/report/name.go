package report

import (
	"path"
	"strings"
	"unicode"
)

// NameFromFile derives a report's stable name from its file name: the
// base name without its extension, lower-cased, letters (any script),
// digits, '.' and '_' kept, and every run of other characters turned into
// one '-', none at either end ("Coverage Report.html" is "coverage-report",
// "Lighthouse (1).pdf" "lighthouse-1", "résumé.md" "résumé"). A name left
// empty is "report"; a longer one is cut at MaxNameLen characters.
func NameFromFile(fileName string) string {
	base := path.Base(strings.ReplaceAll(fileName, "\\", "/"))
	base = strings.TrimSuffix(base, path.Ext(base))
	var b strings.Builder
	n, dash := 0, false
	for _, r := range strings.ToLower(base) {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '.' || r == '_') {
			dash = true
			continue
		}
		if n == MaxNameLen || (dash && n+1 == MaxNameLen) {
			break
		}
		if dash && n > 0 {
			b.WriteByte('-')
			n++
		}
		dash = false
		b.WriteRune(r)
		n++
	}
	if name := b.String(); name != "" && name != "." && name != ".." {
		return name
	}
	return "report"
}

// MaxNameLen is the longest report name, in characters.
const MaxNameLen = 100
