package watch

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reportd/reportd/internal/report"
)

// tempPatterns are names that editors, browsers and office suites use for
// files that are not finished documents. They are matched against the base
// name, before --include, because publishing one is never what a user wants.
var tempPatterns = []string{
	"*.swp", "*.swo", "*.swx", // vim
	"*~", ".#*", "#*#", // emacs backup, lock and autosave
	"*.tmp", "*.temp", "*.part", "*.partial", "*.crdownload", "*.download", // downloads and atomic writers
	"~$*", ".~lock.*", // MS Office and LibreOffice owner/lock files
}

// filter decides which paths are reports to publish and which directories to
// descend into. Paths are matched relative to the watched root that holds
// them, with forward slashes, so the same globs work on every platform.
type filter struct {
	include, exclude []string
	// ignored are absolute paths (the state file, the done and failed
	// folders) that the watcher itself writes to; they and everything
	// under them are never published.
	ignored []string
}

func newFilter(include, exclude, ignored []string) (*filter, error) {
	for _, p := range append(append([]string{}, include...), exclude...) {
		if !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("bad glob %q", p)
		}
	}
	f := &filter{include: include, exclude: exclude}
	for _, p := range ignored {
		if p != "" {
			f.ignored = append(f.ignored, filepath.Clean(p))
		}
	}
	return f, nil
}

// file reports whether abs, a file under root, should be published.
func (f *filter) file(root, abs string) bool { return f.reason(root, abs) == "" }

// reason says why abs, a file under root, is not published, or "" when it
// is; watch -v prints it.
func (f *filter) reason(root, abs string) string {
	rel, why := f.placeReason(root, abs)
	if why != "" {
		return why
	}
	base := filepath.Base(abs)
	for _, p := range tempPatterns {
		if m, _ := filepath.Match(p, base); m {
			return "ignored: a temporary file (matches " + p + ")"
		}
	}
	if _, ok := report.TypeOfName(base); !ok {
		return "unsupported type: only " + report.TypeExts(" ", " ") + " are published"
	}
	return f.patternReason(rel)
}

// dir reports whether abs, a directory under root, should be watched.
func (f *filter) dir(root, abs string) bool {
	rel, ok := relTo(root, abs)
	if !ok || f.isIgnored(abs) {
		return false
	}
	if rel == "." {
		return true
	}
	return !hiddenPath(rel) && !matchAny(f.exclude, rel)
}

func (f *filter) isIgnored(abs string) bool {
	for _, p := range f.ignored {
		if abs == p || strings.HasPrefix(abs, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// matchAny matches a pattern with a slash against the whole relative path
// and one without against the base name, like .gitignore does, so
// `--exclude '*.draft.md'` works at any depth.
func matchAny(patterns []string, rel string) bool {
	_, ok := firstMatch(patterns, rel)
	return ok
}

// firstMatch is matchAny that also says which pattern matched.
func firstMatch(patterns []string, rel string) (string, bool) {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, p := range patterns {
		target := base
		if strings.Contains(p, "/") {
			target = rel
		}
		if m, _ := doublestar.Match(p, target); m {
			return p, true
		}
	}
	return "", false
}

func hiddenPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") && part != "." && part != ".." {
			return true
		}
	}
	return false
}

// relTo returns abs relative to root with forward slashes, and false when abs
// is not inside root.
func relTo(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// siteReason says why abs, a site folder under root (--sites), is not
// published, or "" when it is: the checks of reason but the type, with
// --include/--exclude matching the folder's path.
func (f *filter) siteReason(root, abs string) string {
	rel, why := f.placeReason(root, abs)
	if why != "" {
		return why
	}
	return f.patternReason(rel)
}

// placeReason is the check of a file and a site folder alike: under root,
// not the watcher's own, not hidden. It returns abs relative to root, and
// why it is not published or "".
func (f *filter) placeReason(root, abs string) (rel, why string) {
	rel, ok := relTo(root, abs)
	switch {
	case !ok:
		return "", "outside the watched folder"
	case f.isIgnored(abs):
		return rel, "ignored: the watcher's own file or folder (state, --on-success or --on-failure)"
	case hiddenPath(rel):
		return rel, "ignored: hidden (a path part starts with a dot)"
	}
	return rel, ""
}

// patternReason applies --exclude and --include to rel, a slash path
// relative to the watched folder.
func (f *filter) patternReason(rel string) string {
	if p, ok := firstMatch(f.exclude, rel); ok {
		return "excluded by --exclude " + p
	}
	if len(f.include) > 0 && !matchAny(f.include, rel) {
		return "not matched by any --include"
	}
	return ""
}
