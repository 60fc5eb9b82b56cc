package watch

import (
	"path/filepath"
	"testing"
)

// index.html pages (coverage.py's htmlcov/, Allure's allure-report/)
// published by a recursive watch are named after their folders, never
// both "index"; other files keep the name their file name gives.
func TestIndexPagesNamedAfterTheirFolders(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--recursive")...)
	w.ev.waitEvent(t, evIdle, 1)
	write(t, filepath.Join(dir, "htmlcov", "index.html"), "<p>coverage</p>\n")
	write(t, filepath.Join(dir, "allure-report", "index.html"), "<p>tests</p>\n")
	write(t, filepath.Join(dir, "notes.html"), "<p>notes</p>\n")
	w.ev.waitEvent(t, evPublished, 3)
	w.ev.waitEvent(t, evIdle, 2)
	list, err := svc.ListReports(t.Context(), &project)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, r := range list {
		names[r.Name] = r.FileName
	}
	for name, file := range map[string]string{"htmlcov": "index.html", "allure-report": "index.html", "notes": "notes.html"} {
		if names[name] != file {
			t.Errorf("no report %q of %s: %v", name, file, names)
		}
	}
}
