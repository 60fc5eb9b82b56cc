package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reportd/reportd/internal/dirzip"
	"github.com/reportd/reportd/internal/report"
)

// localFile is one file chosen for upload, or a folder uploaded as a site.
type localFile struct {
	path string // as matched, relative paths stay relative
	name string // base name sent to the server
	typ  report.FileType
	size int64        // of the file, or of the folder's files together
	tree *dirzip.Tree // a folder: sent as a tar.zst made on the fly
	// pattern is the glob that picked the file, "" for a literal argument.
	pattern string
}

// expansion is the result of expanding the upload arguments.
type expansion struct {
	files     []localFile
	unmatched []string // patterns that selected no file
	skipped   int      // glob matches left out for an unsupported extension
}

// expandPatterns turns FILE|DIR|GLOB arguments into files; a DIR named
// literally is one site (globs match files only). The tool expands
// globs itself (doublestar, with **) because Windows shells do not, and a
// pattern quoted against the shell must still work. An argument naming an
// existing file is taken literally even if it contains glob characters.
// Glob matches keep only the supported extensions, so 'site/**' skips the
// css and images beside an html report; a literal file of another
// extension is an error unless --type says what it is.
func expandPatterns(patterns []string, override report.FileType) (expansion, error) {
	var ex expansion
	seen := map[string]bool{}
	add := func(path string, size int64, typ report.FileType, pattern string) {
		key, err := filepath.Abs(path)
		if err != nil {
			key = filepath.Clean(path)
		}
		if seen[key] {
			return
		}
		seen[key] = true
		ex.files = append(ex.files, localFile{path: path, name: filepath.Base(path), typ: typ, size: size, pattern: pattern})
	}
	for _, p := range patterns {
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				lf, err := siteOf(p, override)
				if err != nil {
					return ex, err
				}
				key, _ := filepath.Abs(p)
				if !seen[key] {
					seen[key] = true
					ex.files = append(ex.files, lf)
				}
				continue
			}
			typ := override
			if typ == "" {
				t, ok := report.TypeOfName(p)
				if !ok {
					return ex, usageErrorf("%s: cannot tell the report type from the extension (supported: %s); use --type", p, report.TypeExts(" ", " "))
				}
				typ = t
			}
			add(p, st.Size(), typ, "")
			continue
		}
		matches, err := doublestar.FilepathGlob(p, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
		if errors.Is(err, doublestar.ErrBadPattern) {
			return ex, usageErrorf("invalid pattern %q", p)
		}
		if err != nil {
			return ex, fmt.Errorf("expanding %q: %w", p, err)
		}
		n := 0
		for _, m := range matches {
			t, ok := report.TypeOfName(m)
			if !ok {
				ex.skipped++
				continue
			}
			if override != "" {
				t = override
			}
			st, err := os.Stat(m)
			if err != nil {
				return ex, err
			}
			add(m, st.Size(), t, p)
			n++
		}
		if n == 0 {
			ex.unmatched = append(ex.unmatched, p)
		}
	}
	return ex, nil
}
