package watch

import (
	"path/filepath"
	"testing"
)

func TestFilterFile(t *testing.T) {
	root := "/drop"
	f, err := newFilter([]string{}, []string{"*.draft.md", "build/**"}, []string{"/drop/done", "/drop/state.db"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{"a.md", true}, {"A.PDF", true}, {"deck.pptx", true}, {"old.ppt", true}, {"page.html", true},
		{"sub/deep/a.md", true},
		{"notes.txt", false}, {"a.htm", false}, {"noext", false},
		{".hidden.md", false}, {".git/x.md", false}, {"sub/.cache/x.md", false},
		{"a.md.swp", false}, {"a.md~", false}, {".#a.md", false}, {"#a.md#", false},
		{"a.tmp", false}, {"a.md.part", false}, {"a.pdf.crdownload", false}, {"~$deck.pptx", false},
		{".~lock.deck.pptx#", false},
		{"x.draft.md", false}, {"sub/x.draft.md", false}, {"build/x.md", false}, {"build/a/x.md", false},
		{"done/a.md", false}, {"state.db", false},
	} {
		got := f.file(root, filepath.Join(root, filepath.FromSlash(tc.rel)))
		if got != tc.want {
			t.Errorf("file(%q) = %v, want %v", tc.rel, got, tc.want)
		}
	}
	if f.file(root, "/elsewhere/a.md") {
		t.Error("a file outside the root passed")
	}
}

func TestFilterInclude(t *testing.T) {
	f, err := newFilter([]string{"reports/**/*.pdf", "*.md"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		"reports/q1/a.pdf": true, "reports/a.pdf": true, "a.pdf": false,
		"x/y.md": true, "reports/a.html": false, "reports/.x.pdf": false,
	} {
		if got := f.file("/r", "/r/"+rel); got != want {
			t.Errorf("file(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestFilterDir(t *testing.T) {
	f, _ := newFilter(nil, []string{"build", "tmp/**"}, []string{"/r/done"})
	for rel, want := range map[string]bool{
		".": true, "a": true, "a/b": true, ".git": false, "a/.cache": false,
		"build": false, "x/build": false, "tmp": false, "tmp/x": false, "done": false, "done/x": false,
	} {
		if got := f.dir("/r", filepath.Join("/r", rel)); got != want {
			t.Errorf("dir(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestFilterBadGlob(t *testing.T) {
	if _, err := newFilter([]string{"[a"}, nil, nil); err == nil {
		t.Fatal("a bad glob was accepted")
	}
}
