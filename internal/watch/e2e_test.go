package watch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Settle times here are short so the suite stays fast; every wait is a poll
// with a generous deadline, never a timed assertion.
const testSettle = "300ms"

func watchArgs(dir, state string, project int64, extra ...string) []string {
	return append([]string{dir, "--project", strconv.FormatInt(project, 10), "--state", state,
		"--settle", testSettle, "--retry-min", "100ms", "--retry-max", "500ms"}, extra...)
}

func TestSlowWriterIsPublishedOnceWithFullContent(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--settle", "1s")...)
	w.ev.waitEvent(t, evIdle, 1)

	// Two writers over ~3s: one keeps the file open, one appends and closes
	// each time. Pauses are shorter than --settle.
	var full, appended bytes.Buffer
	f, err := os.Create(filepath.Join(dir, "open.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		chunk := fmt.Sprintf("## chunk %d\n%s\n", i, strings.Repeat("x", 1000+i))
		full.WriteString(chunk)
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
		appended.WriteString(chunk)
		a, err := os.OpenFile(filepath.Join(dir, "append.md"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		a.WriteString(chunk)
		a.Close()
		time.Sleep(250 * time.Millisecond)
	}
	f.Close()
	w.ev.waitEvent(t, evPublished, 2)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, map[string][]byte{"open.md": full.Bytes(), "append.md": appended.Bytes()})
	for _, e := range w.ev.all() {
		if e.Event == evPublished && !strings.HasSuffix(e.DashboardURL, fmt.Sprintf("/#/reports/%d", e.ReportID)) {
			t.Errorf("published event without its dashboard link: %+v", e)
		}
	}
}

// A writer that pauses for longer than --settle while holding the file open
// is not finished: /proc shows it open for writing.
func TestWriterPausingPastSettleWithFileOpen(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project)...)
	w.ev.waitEvent(t, evIdle, 1)

	f, err := os.Create(filepath.Join(dir, "paused.html"))
	if err != nil {
		t.Fatal(err)
	}
	var full bytes.Buffer
	for i := range 3 {
		chunk := fmt.Sprintf("<p>part %d</p>\n", i)
		full.WriteString(chunk)
		f.WriteString(chunk)
		time.Sleep(900 * time.Millisecond) // 3× --settle
	}
	if n := w.ev.count(evPublished); n != 0 {
		t.Fatalf("published %d time(s) while the writer still held the file open", n)
	}
	f.Close()
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, map[string][]byte{"paused.html": full.Bytes()})
}

func TestBurstOf500IsPublishedExactlyOnce(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "-j", "4")...)
	w.ev.waitEvent(t, evIdle, 1)

	want := map[string][]byte{}
	for i := range 500 {
		name := fmt.Sprintf("burst-%03d.md", i)
		want[name] = write(t, filepath.Join(dir, name), fmt.Sprintf("# report %d\n\n%s\n", i, strings.Repeat("line\n", i%50)))
	}
	w.ev.waitEvent(t, evPublished, 500)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, want)
	if n := w.ev.count(evPublished); n != 500 {
		t.Fatalf("%d published events, want 500", n)
	}
}

func TestRestartPublishesNothingAgain(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	want := map[string][]byte{}
	for i := range 5 {
		name := fmt.Sprintf("r%d.md", i)
		want[name] = write(t, filepath.Join(dir, name), fmt.Sprintf("report %d\n", i))
	}
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project)...)
	w.ev.waitEvent(t, evPublished, 5)
	w.ev.waitEvent(t, evIdle, 1)
	w.stop(t)

	// Touch one (new mtime, same bytes): still nothing to publish.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(dir, "r0.md"), later, later); err != nil {
		t.Fatal(err)
	}
	w2 := startWatch(t, shared.URL(), watchArgs(dir, state, project)...)
	w2.ev.waitEvent(t, evIdle, 1)
	w2.stop(t)
	if n := w2.ev.count(evPublished); n != 0 {
		t.Fatalf("the restarted watcher published %d file(s):\n%s", n, w2.ev)
	}
	// The restart says why nothing went out.
	if i := slices.IndexFunc(w2.ev.all(), func(e Event) bool { return e.Event == evResumed }); i < 0 ||
		w2.ev.all()[i].Count != 5 || !strings.Contains(w2.ev.all()[i].Message, "5 files already published") {
		t.Errorf("no resumed event with count 5:\n%s", w2.ev)
	}
	assertPublished(t, shared, svc, project, want)

	// The same through --once.
	if err, ev := runOnce(t, shared.URL(), watchArgs(dir, state, project)...); err != nil || ev.count(evPublished) != 0 {
		t.Fatalf("--once after a restart: %v, %d published", err, ev.count(evPublished))
	}
}

func TestChangedContentIsPublishedAgainAndReplaced(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	path := filepath.Join(dir, "weekly.md")
	write(t, path, "v1\n")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--replace")...)
	w.ev.waitEvent(t, evPublished, 1)
	first := reports(t, svc, project)["weekly.md"][0].ID

	want := write(t, path, "v2, longer\n")
	w.ev.waitEvent(t, evPublished, 2)
	w.ev.waitEvent(t, evReplaced, 1)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, map[string][]byte{"weekly.md": want})
	if got := reports(t, svc, project)["weekly.md"][0].ID; got == first {
		t.Fatal("the report was not replaced by a new one")
	}
}

func TestServerOutageQueuesAndPublishesAfterRecovery(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	d := startDaemon(t, "", data)
	svc := newClient(t, d.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	want := map[string][]byte{"before.md": write(t, filepath.Join(dir, "before.md"), "before the outage\n")}

	w := startWatch(t, d.URL(), watchArgs(dir, state, project)...)
	w.ev.waitEvent(t, evPublished, 1)
	d.Stop()

	for i := range 4 {
		name := fmt.Sprintf("during-%d.md", i)
		want[name] = write(t, filepath.Join(dir, name), fmt.Sprintf("written while the server was down %d\n", i))
	}
	w.ev.waitEvent(t, evServerDown, 1)
	w.ev.waitEvent(t, evQueued, 4)

	// The queue survives a restart of the watcher, even with
	// --initial-scan=skip: queued files are not "already there".
	w.stop(t)
	w2 := startWatch(t, d.URL(), watchArgs(dir, state, project, "--initial-scan", "skip")...)
	w2.ev.waitEvent(t, evQueued, 4)

	d2 := startDaemon(t, d.Addr, data)
	w2.ev.waitEvent(t, evServerUp, 1)
	w2.ev.waitEvent(t, evPublished, 4)
	w2.ev.waitEvent(t, evIdle, 1)
	assertPublished(t, d2, svc, project, want)
}

func TestTempFileThenRenameAndMoveIn(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	outside := t.TempDir()
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project)...)
	w.ev.waitEvent(t, evIdle, 1)

	// An editor's atomic save: a temp file written slowly, then renamed.
	tmp := filepath.Join(dir, ".plan.md.swp")
	f, _ := os.Create(tmp)
	for i := range 5 {
		fmt.Fprintf(f, "draft line %d\n", i)
		time.Sleep(100 * time.Millisecond)
	}
	f.Close()
	saved, _ := os.ReadFile(tmp)
	other := filepath.Join(dir, "deck.pdf.tmp")
	pdf := write(t, other, "%PDF-1.4\n% a small pdf body\n%%EOF\n")
	if err := os.Rename(tmp, filepath.Join(dir, "plan.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, filepath.Join(dir, "deck.pdf")); err != nil {
		t.Fatal(err)
	}
	// A finished file moved in from another folder: a Create, no Write.
	moved := write(t, filepath.Join(outside, "moved.html"), "<h1>moved in</h1>\n")
	if err := os.Rename(filepath.Join(outside, "moved.html"), filepath.Join(dir, "moved.html")); err != nil {
		t.Fatal(err)
	}
	w.ev.waitEvent(t, evPublished, 3)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, map[string][]byte{"plan.md": saved, "deck.pdf": pdf, "moved.html": moved})
}

func TestIgnoredNamesStayUnpublished(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	done := filepath.Join(dir, "done")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--recursive", "--exclude", "*.draft.md", "--on-success", "move:"+done)...)
	w.ev.waitEvent(t, evIdle, 1)
	for _, name := range []string{".hidden.md", "a.md.swp", "a.md~", ".#a.md", "a.tmp", "a.md.part",
		"a.pdf.crdownload", "~$deck.pptx", "notes.txt", "x.draft.md", ".git/inside.md", "sub/.cache/c.md"} {
		write(t, filepath.Join(dir, name), "ignored\n")
	}
	want := map[string][]byte{"sentinel.md": write(t, filepath.Join(dir, "sentinel.md"), "published\n")}
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evMoved, 1)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, want)
	if _, err := os.Stat(filepath.Join(done, "sentinel.md")); err != nil {
		t.Fatalf("--on-success move: %v", err)
	}
}

func TestRecursiveWatchOfFolderCreatedAfterStart(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--recursive")...)
	w.ev.waitEvent(t, evIdle, 1)

	// Created with its files at once: they predate the folder's watch.
	want := map[string][]byte{
		"deep.md":  write(t, filepath.Join(dir, "a", "b", "c", "deep.md"), "deep\n"),
		"top.html": write(t, filepath.Join(dir, "a", "top.html"), "<p>top</p>\n"),
	}
	w.ev.waitEvent(t, evPublished, 2)
	// And one written into the new folder later, through its watch.
	want["later.md"] = write(t, filepath.Join(dir, "a", "b", "later.md"), "later\n")
	w.ev.waitEvent(t, evPublished, 3)
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, want)
}

func TestProjectFromDir(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	name := fmt.Sprintf("fromdir-%d", time.Now().UnixNano())
	want := write(t, filepath.Join(dir, name, "r.md"), "in a project folder\n")
	err, ev := runOnce(t, shared.URL(), dir, "--project-from-dir", "--create-project", "--state", state, "--settle", testSettle)
	if err != nil {
		t.Fatalf("--once: %v\n%s", err, ev)
	}
	projects, _ := svc.ListProjects(t.Context())
	var id int64
	for _, p := range projects {
		if p.Name == name {
			id = p.ID
		}
	}
	if id == 0 {
		t.Fatalf("project %q was not created", name)
	}
	assertPublished(t, shared, svc, id, map[string][]byte{"r.md": want})
}

// --initial-scan=skip leaves files that were there at start alone, also at
// later rescans, until they change.
func TestInitialScanSkip(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	write(t, filepath.Join(dir, "old.md"), "there before\n")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--initial-scan", "skip", "--rescan-interval", "200ms")...)
	w.ev.waitEvent(t, evIdle, 1)
	want := map[string][]byte{"new.md": write(t, filepath.Join(dir, "new.md"), "new\n")}
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evScan, 3) // rescans after the start
	w.ev.waitEvent(t, evIdle, 2)
	assertPublished(t, shared, svc, project, want)

	want["old.md"] = write(t, filepath.Join(dir, "old.md"), "changed after start\n")
	w.ev.waitEvent(t, evPublished, 2)
	w.ev.waitEvent(t, evIdle, 3)
	assertPublished(t, shared, svc, project, want)
}

// An --on-success move cut short (the watcher stopped between publishing
// and moving) is finished at the next start, without publishing again.
func TestOnSuccessMoveFinishedAfterRestart(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state, done := t.TempDir(), filepath.Join(t.TempDir(), "state.db"), t.TempDir()
	want := map[string][]byte{"a.md": write(t, filepath.Join(dir, "a.md"), "# a\n")}
	// Published with keep: the file stays, as after a crash before the move.
	if err, _ := runOnce(t, shared.URL(), watchArgs(dir, state, project)...); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--on-success", "move:"+done)...)
	w.ev.waitEvent(t, evMoved, 1)
	w.ev.waitEvent(t, evIdle, 1)
	if n := w.ev.count(evPublished); n != 0 {
		t.Fatalf("published %d again", n)
	}
	if _, err := os.Stat(filepath.Join(done, "a.md")); err != nil {
		t.Fatal(err)
	}
	assertPublished(t, shared, svc, project, want)
}
