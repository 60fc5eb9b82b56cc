package site

import (
	"path"
	"slices"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/reportd/reportd/internal/report"
)

// Name limits: a whole path and one of its segments, in bytes. The rule
// lives in internal/report so that reportctl checks names without linking
// the server's storage packages.
const (
	MaxPathLen    = report.MaxSiteNameLen
	MaxSegmentLen = report.MaxSiteSegmentLen
)

// CheckName validates one file name of a site (report.CheckSiteName).
func CheckName(name string) error { return report.CheckSiteName(name) }

// checkName checks name and names shown (the entry as the archive spells
// it) in the error.
func checkName(name, shown string) error { return report.CheckSiteNameShown(name, shown) }

// archiveName turns an archive entry's name into a site name: a leading
// "./" (tar -C dir .) and, for folders, a trailing "/" are dropped; the
// rest must pass CheckName. The bare "./" folder yields "".
func archiveName(raw string, dir bool) (string, error) {
	name := raw
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	if dir {
		name = strings.TrimSuffix(name, "/")
		if name == "" || name == "." {
			return "", nil
		}
	}
	if err := checkName(name, raw); err != nil {
		return "", err
	}
	return name, nil
}

// names refuses duplicate names, names equal under Unicode case folding
// (after NFC normalisation), and a name that is both a file and a folder:
// each would be ambiguous or collide on a case-insensitive file system.
type names struct {
	fold  cases.Caser
	files map[string]string // folded -> original
	dirs  map[string]string // folded folder -> original
}

func newNames() *names {
	return &names{fold: cases.Fold(), files: map[string]string{}, dirs: map[string]string{}}
}

func (n *names) key(s string) string { return n.fold.String(norm.NFC.String(s)) }

func (n *names) add(name string) error {
	k := n.key(name)
	if o, ok := n.files[k]; ok {
		if o == name {
			return report.Errorf(report.Validation, "duplicate file name %q in the site", name)
		}
		return report.Errorf(report.Validation, "file names %q and %q collide: they differ only in case or Unicode form", o, name)
	}
	if o, ok := n.dirs[k]; ok {
		return report.Errorf(report.Validation, "%q is both a file and a folder (%q) in the site", name, o)
	}
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		dk := n.key(d)
		if o, ok := n.files[dk]; ok {
			return report.Errorf(report.Validation, "%q is both a file and the folder of %q in the site", o, name)
		}
		if o, ok := n.dirs[dk]; ok {
			if o != d {
				return report.Errorf(report.Validation, "folder names %q and %q collide: they differ only in case or Unicode form", o, d)
			}
			break // its parents are registered already
		}
		n.dirs[dk] = d
	}
	n.files[k] = name
	return nil
}

// mimeTypes is the built-in table of content types by extension (the
// host's mime.types is never consulted, so every node answers alike).
var mimeTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".htm":   "text/html; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".json":  "application/json",
	".map":   "application/json",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".jpg":   "image/jpeg",
	".jpeg":  "image/jpeg",
	".gif":   "image/gif",
	".webp":  "image/webp",
	".ico":   "image/vnd.microsoft.icon",
	".woff":  "font/woff",
	".woff2": "font/woff2",
	".ttf":   "font/ttf",
	".txt":   "text/plain; charset=utf-8",
	".log":   "text/plain; charset=utf-8",
	".csv":   "text/csv; charset=utf-8",
	".md":    "text/markdown; charset=utf-8",
	".xml":   "application/xml",
	".wasm":  "application/wasm",
	".zip":   "application/zip",
	".pdf":   "application/pdf",
	".webm":  "video/webm",
	".mp4":   "video/mp4",
}

// ContentTypes are the types ContentType gives: the built-in table's and
// application/octet-stream.
func ContentTypes() []string {
	types := []string{"application/octet-stream"}
	for _, t := range mimeTypes {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return types
}

// ContentType is the type served for a site file name, from the built-in
// table by extension (case-insensitive); application/octet-stream else.
func ContentType(name string) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}
