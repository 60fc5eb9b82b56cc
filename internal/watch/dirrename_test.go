package watch

import (
	"os"
	"path/filepath"
	"testing"
)

// A watched folder renamed inside the tree keeps being watched under its
// new name: fsnotify drops the old watch on IN_MOVE_SELF, racing with our
// re-add, so the runner re-adds it a moment later.
func TestRecursiveRenamedFolderStaysWatched(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	want := map[string][]byte{"first.md": write(t, filepath.Join(dir, "sub", "first.md"), "first\n")}
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--recursive")...)
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evIdle, 1)
	for i, name := range []string{"renamed", "again", "third"} {
		old := filepath.Join(dir, []string{"sub", "renamed", "again"}[i])
		if err := os.Rename(old, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		w.ev.waitEvent(t, evWatching, 2+i) // the new name is watched
		file := name + ".md"
		want[file] = write(t, filepath.Join(dir, name, file), "written after renaming to "+name+"\n")
		w.ev.waitEvent(t, evPublished, 2+i)
	}
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, want)
	if t.Failed() {
		t.Log(w.ev)
	}
}

// A published file renamed in place is the same report; the same content
// written anew after a delete, or copied, is a new one.
func TestRenameVersusDeleteAndCopy(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	same := "# the same bytes\n"
	write(t, filepath.Join(dir, "draft.md"), same)
	write(t, filepath.Join(dir, "gone.md"), same)
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project)...)
	w.ev.waitEvent(t, evPublished, 2)
	w.ev.waitEvent(t, evIdle, 1)

	if err := os.Rename(filepath.Join(dir, "draft.md"), filepath.Join(dir, "final.md")); err != nil {
		t.Fatal(err)
	}
	w.ev.waitEvent(t, evRenamed, 1)
	if err := os.Remove(filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "rewritten.md"), same)
	write(t, filepath.Join(dir, "copy.md"), same)
	w.ev.waitEvent(t, evPublished, 4)
	w.ev.waitEvent(t, evIdle, 2)
	if n := w.ev.count(evRenamed); n != 1 {
		t.Fatalf("%d renames, want 1:\n%s", n, w.ev)
	}
	got := reports(t, svc, project)
	for _, name := range []string{"final.md", "gone.md", "rewritten.md", "copy.md"} {
		if len(got[name]) != 1 {
			t.Errorf("%s: %d reports, want 1", name, len(got[name]))
		}
	}
	if len(got) != 4 {
		t.Errorf("%d report names, want 4 (draft.md's report is renamed final.md)", len(got))
	}
}
