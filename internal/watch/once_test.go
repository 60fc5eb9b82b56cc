package watch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/testbin"
)

func TestOnceExitCodes(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	args := func(extra ...string) []string { return watchArgs(dir, state, project, extra...) }

	if err, _ := runOnce(t, shared.URL(), watchArgs(dir, state, 1<<40)...); exitcode.Of(err) != exitcode.Failed {
		t.Fatalf("no such project: %v, want exit %d", err, exitcode.Failed)
	}
	if err, _ := runOnce(t, shared.URL(), args()...); exitcode.Of(err) != exitcode.NoMatch {
		t.Fatalf("empty folder: %v, want exit %d", err, exitcode.NoMatch)
	}
	if err, _ := runOnce(t, shared.URL(), args("--allow-empty")...); err != nil {
		t.Fatalf("empty folder with --allow-empty: %v", err)
	}

	want := map[string][]byte{
		"a.md":   write(t, filepath.Join(dir, "a.md"), "a\n"),
		"b.html": write(t, filepath.Join(dir, "b.html"), "<b>b</b>\n"),
	}
	if err, ev := runOnce(t, shared.URL(), args()...); err != nil || ev.count(evPublished) != 2 {
		t.Fatalf("two files: %v, %d published\n%s", err, ev.count(evPublished), ev)
	}
	// Nothing new: still a success, and nothing published.
	if err, ev := runOnce(t, shared.URL(), args()...); err != nil || ev.count(evPublished) != 0 {
		t.Fatalf("second run: %v, %d published", err, ev.count(evPublished))
	}

	// Unreachable: exit 5, and the file is published by the next run.
	want["c.md"] = write(t, filepath.Join(dir, "c.md"), "c\n")
	dead, err := testbin.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := runOnce(t, "http://"+dead, args()...); exitcode.Of(err) != exitcode.Unreachable {
		t.Fatalf("server down: %v, want exit %d", err, exitcode.Unreachable)
	}
	if err, ev := runOnce(t, shared.URL(), args()...); err != nil || ev.count(evPublished) != 1 {
		t.Fatalf("after the outage: %v, %d published", err, ev.count(evPublished))
	}

	// Rejected by the server (not a PDF): exit 1, then set aside.
	failedDir := filepath.Join(dir, "failed")
	write(t, filepath.Join(dir, "bad.pdf"), "this is not a pdf\n")
	err, ev := runOnce(t, shared.URL(), args("--max-attempts", "2", "--on-failure", "move:"+failedDir)...)
	if exitcode.Of(err) != exitcode.Failed || ev.count(evRejected) != 1 || ev.count(evFailed) != 1 {
		t.Fatalf("bad pdf: %v (exit %d), want exit %d after 2 attempts\n%s", err, exitcode.Of(err), exitcode.Failed, ev)
	}
	if _, err := os.Stat(filepath.Join(failedDir, "bad.pdf")); err != nil {
		t.Fatalf("--on-failure move: %v", err)
	}
	// The failed folder is inside the watched one and is never published.
	if err, ev := runOnce(t, shared.URL(), args()...); err != nil || ev.count(evPublished) != 0 {
		t.Fatalf("after setting aside: %v, %d published", err, ev.count(evPublished))
	}
	assertPublished(t, shared, svc, project, want)
}

func TestPollMode(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--poll", "200ms", "--recursive")...)
	w.ev.waitEvent(t, evIdle, 1)
	want := map[string][]byte{"polled.md": write(t, filepath.Join(dir, "sub", "polled.md"), "found by polling\n")}
	w.ev.waitEvent(t, evPublished, 1)
	assertPublished(t, shared, svc, project, want)
}
