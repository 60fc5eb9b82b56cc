package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVerboseSaysWhy: with -v every file that is not published is named
// with the reason, once, and files on their way say what they wait for.
func TestVerboseSaysWhy(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	// There before the start: found by the scan.
	write(t, filepath.Join(dir, "notes.txt"), "not a report")
	write(t, filepath.Join(dir, ".hidden.md"), "# hidden")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "-v", "--exclude", "draft-*")...)
	w.ev.waitEvent(t, evIdle, 1)

	// Written while watching: seen through fsnotify events.
	write(t, filepath.Join(dir, "report.md.swp"), "vim swap")
	write(t, filepath.Join(dir, "draft-1.md"), "# draft")
	write(t, filepath.Join(dir, "weekly.md"), "# weekly")
	f, err := os.Create(filepath.Join(dir, "open.md"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("# still being written")
	w.ev.waitEvent(t, evPublished, 1)
	waitFor(t, "open.md waiting for its writer", 90*time.Second, func() bool {
		return reasonFor(w.ev, evWaiting, "open.md", "still open for writing") != ""
	})
	f.Close()
	w.ev.waitEvent(t, evPublished, 2)
	w.stop(t)

	for name, want := range map[string]string{
		"notes.txt":     "unsupported type",
		".hidden.md":    "hidden",
		"report.md.swp": "temporary file (matches *.swp)",
		"draft-1.md":    "excluded by --exclude draft-*",
	} {
		if got := reasonFor(w.ev, evSkipped, name, ""); !strings.Contains(got, want) {
			t.Errorf("%s: skipped because %q, want %q\n%s", name, got, want, w.ev)
		}
	}
	if got := reasonFor(w.ev, evWaiting, "weekly.md", ""); !strings.Contains(got, "not settled yet") {
		t.Errorf("weekly.md: waiting %q\n%s", got, w.ev)
	}
	// One explanation per file, however many write events it had.
	n := 0
	for _, e := range w.ev.all() {
		if e.Event == evSkipped && filepath.Base(e.Path) == "draft-1.md" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("draft-1.md explained %d times", n)
	}
}

// reasonFor is the message of the first event of kind about the file
// named base whose message contains sub.
func reasonFor(ev *events, kind, base, sub string) string {
	for _, e := range ev.all() {
		if e.Event == kind && filepath.Base(e.Path) == base && strings.Contains(e.Message, sub) {
			return e.Message
		}
	}
	return ""
}
