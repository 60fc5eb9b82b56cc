package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

func TestExpandPatterns(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"build/a.html", "build/b.HTML", "build/x/y/c.md", "build/x/y/c.css",
		"build/z/d.pdf", "build/z/e.pptx", "build/z/f.ppt", "docs/readme.md",
		"weird[1].html", "build/.hidden/g.html",
	} {
		writeFile(t, filepath.Join(dir, f), "x")
	}
	t.Chdir(dir)

	tests := []struct {
		name      string
		patterns  []string
		override  report.FileType
		want      []string // path:type
		unmatched []string
		skipped   int
	}{
		{name: "double star", patterns: []string{"build/**/*.md"}, want: []string{"build/x/y/c.md:md"}},
		{name: "everything under", patterns: []string{"build/**"}, skipped: 1, want: []string{
			"build/.hidden/g.html:html", "build/a.html:html", "build/b.HTML:html", "build/x/y/c.md:md",
			"build/z/d.pdf:pdf", "build/z/e.pptx:pptx", "build/z/f.ppt:ppt"}},
		{name: "dedupe across patterns", patterns: []string{"build/*.html", "build/a.html", "./build/a.html"},
			want: []string{"build/a.html:html"}},
		{name: "literal with glob characters", patterns: []string{"weird[1].html"}, want: []string{"weird[1].html:html"}},
		{name: "override", patterns: []string{"docs/*"}, override: report.HTML, want: []string{"docs/readme.md:html"}},
		{name: "unmatched kept in order", patterns: []string{"nope/*.md", "docs/*.md", "build/*.pdf"},
			want: []string{"docs/readme.md:md"}, unmatched: []string{"nope/*.md", "build/*.pdf"}},
		{name: "only unsupported", patterns: []string{"build/x/**/*.css"}, skipped: 1, unmatched: []string{"build/x/**/*.css"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := expandPatterns(tt.patterns, tt.override)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range ex.files {
				got = append(got, filepath.ToSlash(f.path)+":"+string(f.typ))
				if f.name != filepath.Base(f.path) || f.size != 1 {
					t.Errorf("%+v", f)
				}
			}
			if !equal(got, tt.want) || !equal(ex.unmatched, tt.unmatched) || ex.skipped != tt.skipped {
				t.Fatalf("got %v unmatched %v skipped %d; want %v %v %d", got, ex.unmatched, ex.skipped, tt.want, tt.unmatched, tt.skipped)
			}
		})
	}

	// A folder named literally is one site; globs never match folders,
	// so 'build/**' and 'build' do not conflict.
	ex, err := expandPatterns([]string{"build", "build/a.html", "./build/"}, "")
	if err != nil || len(ex.files) != 2 {
		t.Fatalf("directory: %+v %v", ex, err)
	}
	if s := ex.files[0]; s.tree == nil || s.name != "build" || s.typ != report.HTML || len(s.tree.Files) != 8 || s.size != 8 {
		t.Fatalf("directory as a site: %+v", s)
	}
	if _, err := expandPatterns([]string{"build"}, report.PDF); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("directory with --type pdf: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := expandPatterns([]string{"empty"}, ""); err == nil {
		t.Fatal("an empty folder was accepted")
	}
	// ** does not descend into symlinked directories (no loops, no escapes).
	if err := os.Symlink(dir, filepath.Join(dir, "build", "loop")); err == nil {
		if ex, err := expandPatterns([]string{"build/**/*.md"}, ""); err != nil || len(ex.files) != 1 {
			t.Fatalf("symlinked dir followed: %+v %v", ex, err)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
