package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reportd/reportd/internal/detect"
)

// siteFiles bounds how many files of a folder siteFolder lists to name the
// generator (detect.Site needs only the entry pages and data files).
const siteFiles = 20000

// globbedSite is a report site a glob picked HTML files from: uploaded one
// by one its pages lose the scripts, styles and data beside them (an
// Allure report becomes an endless spinner, htmlcov single pages).
type globbedSite struct {
	pattern   string
	dir       string // the folder to upload instead
	generator string // as internal/detect names it, "" when unknown
	picked    int    // HTML files the pattern picked inside dir
}

func (s globbedSite) String() string {
	gen := ""
	if s.generator != "" {
		gen = " (" + s.generator + ")"
	}
	return fmt.Sprintf("%q picked %d HTML file(s) of the report site %s%s; uploaded alone they lose the site's scripts and data: upload the folder instead (reportctl upload %s)",
		s.pattern, s.picked, s.dir, gen, shellQuote(s.dir))
}

// globbedSites finds the report sites among the folders of the HTML files
// that glob patterns picked. A file named literally is the user's choice
// and is not looked at. The folder named is the highest one at or above
// the file, below the pattern's fixed base, that looks like a site (see
// looksLikeSite), so 'build/**/*.html' over coverage/lcov-report/src/a.html
// names coverage/lcov-report, not its src/ sub-folder.
func globbedSites(patterns []string, files []localFile) []globbedSite {
	var out []globbedSite
	index := map[string]int{}
	verdict := map[string]bool{}
	isSite := func(dir string) bool {
		v, ok := verdict[dir]
		if !ok {
			v = looksLikeSite(dir)
			verdict[dir] = v
		}
		return v
	}
	for _, f := range files {
		if f.tree != nil || f.typ != "html" || f.pattern == "" {
			continue
		}
		base, _ := doublestar.SplitPattern(filepath.ToSlash(f.pattern))
		base = filepath.Clean(filepath.FromSlash(base))
		site := ""
		for dir := filepath.Dir(f.path); ; dir = filepath.Dir(dir) {
			if isSite(dir) {
				site = dir
			}
			if dir == base || !within(dir, base) || filepath.Dir(dir) == dir {
				break
			}
		}
		if site == "" {
			continue
		}
		key := f.pattern + "\x00" + site
		if i, ok := index[key]; ok {
			out[i].picked++
			continue
		}
		index[key] = len(out)
		out = append(out, globbedSite{pattern: f.pattern, dir: site, generator: siteGenerator(site), picked: 1})
	}
	return out
}

// within says whether dir is base or below it (lexically).
func within(dir, base string) bool {
	rel, err := filepath.Rel(base, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// looksLikeSite: an entry page (index.html, or the other names generators
// give theirs) next to what only a multi-file report has: a data/, static/
// or assets/ folder, script files, or more pages of a generator that
// internal/detect knows.
func looksLikeSite(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	entry, parts := false, false
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		switch {
		case e.IsDir() && (name == "data" || name == "static" || name == "assets" || name == "widgets"):
			parts = true
		case !e.IsDir() && (name == "index.html" || name == "mochawesome.html" || name == "report.html"):
			entry = true
		case !e.IsDir() && (path.Ext(name) == ".js" || path.Ext(name) == ".mjs"):
			parts = true
		}
	}
	if !entry {
		return false
	}
	return parts || siteGenerator(dir) != ""
}

// siteGenerator names the generator of the site in dir as the server
// would (internal/detect), or "".
func siteGenerator(dir string) string {
	var files []string
	errStop := errors.New("enough")
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if len(files) == siteFiles {
			return errStop
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	g, _ := detect.Site(files, func(name string) (io.ReadCloser, error) {
		return root.Open(filepath.FromSlash(name))
	})
	return g
}

// shellQuote quotes p for a POSIX shell when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+@%=:,", r))
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
