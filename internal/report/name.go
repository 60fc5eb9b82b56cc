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
	return cleanName(strings.TrimSuffix(base, path.Ext(base)))
}

// NameFromFolder derives a report's name from a folder's name the way
// NameFromFile does from a file's, keeping every dot ("allure-report",
// "htmlcov", "v1.2"): the name of a site, or of a file whose own name says
// nothing (index.html).
func NameFromFolder(folder string) string {
	return cleanName(path.Base(strings.ReplaceAll(folder, "\\", "/")))
}

// IsIndexPage says that a file's name is a generic entry page
// (index.html), which names nothing: its folder names the report.
func IsIndexPage(fileName string) bool {
	base := strings.ToLower(path.Base(strings.ReplaceAll(fileName, "\\", "/")))
	return base == "index.html" || base == "index.htm"
}

func cleanName(base string) string {
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
