package watch

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

// siteFiles is what a site report holds, read from its download (a zip).
func siteFiles(t *testing.T, base string, id int64) map[string]string {
	t.Helper()
	b := download(t, base, id)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("download of site %d is not a zip: %v", id, err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(c)
	}
	return out
}

func keys(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

func onlyReport(t *testing.T, svc report.Service, project int64) report.Report {
	t.Helper()
	list, err := svc.ListReports(t.Context(), &project)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("%d reports, want exactly 1: %+v", len(list), list)
	}
	return list[0]
}

// A folder written file by file is published once, as one site, when it
// has been quiet for --settle; a restarted watcher does not publish it
// again; loose files beside it are not published.
func TestSitesFolderPublishedOnceAcrossRestart(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--sites", "--settle", "500ms")...)
	w.ev.waitEvent(t, evIdle, 1)

	write(t, filepath.Join(dir, "loose.html"), "<p>not a site</p>")
	write(t, filepath.Join(dir, "htmlcov", "index.html"), "<h1>cov</h1>")
	write(t, filepath.Join(dir, "htmlcov", "z_a.html"), "<p>a</p>")
	write(t, filepath.Join(dir, "htmlcov", "static", "style.css"), "h1{}")
	write(t, filepath.Join(dir, "htmlcov", ".gitignore"), "*\n")
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evIdle, 2)

	rep := onlyReport(t, svc, project)
	if rep.Kind != report.KindSite || rep.Files != 4 || rep.FileName != "htmlcov" || rep.Entry != "index.html" || rep.Name != "htmlcov" {
		t.Fatalf("published %+v, want the site htmlcov of 4 files", rep)
	}
	if got := keys(siteFiles(t, shared.URL(), rep.ID)); got != ".gitignore index.html static/style.css z_a.html" {
		t.Fatalf("site holds %s", got)
	}
	for _, e := range w.ev.all() {
		if e.Event == evPublished && (e.Path != filepath.Join(dir, "htmlcov") || e.Count != 4 || e.ReportID != rep.ID) {
			t.Errorf("published event %+v", e)
		}
	}
	w.stop(t)

	// Restart: the folder is remembered, nothing goes out again.
	w2 := startWatch(t, shared.URL(), watchArgs(dir, state, project, "--sites", "--settle", "500ms")...)
	w2.ev.waitEvent(t, evIdle, 1)
	w2.stop(t)
	if n := w2.ev.count(evPublished); n != 0 {
		t.Fatalf("restart published %d more\n%s", n, w2.ev)
	}
	if err, ev := runOnce(t, shared.URL(), watchArgs(dir, state, project, "--sites")...); err != nil || ev.count(evPublished) != 0 {
		t.Fatalf("--once after the restart: %v, %d published", err, ev.count(evPublished))
	}
	onlyReport(t, svc, project)
}

// With --marker the folder waits for the marker however quiet it is, then
// goes out at once, without the marker; exactly once across restarts.
func TestSitesMarker(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	args := watchArgs(dir, state, project, "--marker", ".done", "-v")

	write(t, filepath.Join(dir, "run-1", "index.html"), "<h1>run 1</h1>")
	write(t, filepath.Join(dir, "run-1", "data", "x.json"), "{}")
	// --once: quiet for long enough, but no marker: nothing to publish.
	if err, ev := runOnce(t, shared.URL(), args...); exitcode.Of(err) != exitcode.NoMatch || ev.count(evPublished) != 0 {
		t.Fatalf("--once without the marker: %v\n%s", err, ev)
	}

	w := startWatch(t, shared.URL(), args...)
	w.ev.waitEvent(t, evIdle, 1)
	waitFor(t, "the skip event naming the marker", 90*time.Second, func() bool {
		for _, e := range w.ev.all() {
			if e.Event == evSkipped && e.Path == filepath.Join(dir, "run-1") && strings.Contains(e.Message, ".done") {
				return true
			}
		}
		return false
	})
	if n := w.ev.count(evPublished); n != 0 {
		t.Fatalf("published before the marker\n%s", w.ev)
	}
	write(t, filepath.Join(dir, "run-1", ".done"), "")
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evIdle, 2)
	w.stop(t)

	rep := onlyReport(t, svc, project)
	if got := keys(siteFiles(t, shared.URL(), rep.ID)); rep.Kind != report.KindSite || got != "data/x.json index.html" {
		t.Fatalf("published %+v holding %s (the marker must not be uploaded)", rep, got)
	}
	if err, ev := runOnce(t, shared.URL(), args...); err != nil || ev.count(evPublished) != 0 {
		t.Fatalf("--once after publishing: %v\n%s", err, ev)
	}
	onlyReport(t, svc, project)
}

// With --project-from-dir the site folders are one level deeper, and a
// folder renamed after publishing is not published again.
func TestSitesByProjectAndRename(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	name := "sites-" + strings.ReplaceAll(t.Name(), "/", "-")
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, shared.URL(), dir, "--project-from-dir", "--create-project", "--sites", "--state", state, "--settle", "300ms")
	w.ev.waitEvent(t, evIdle, 1)
	write(t, filepath.Join(dir, name, "e2e", "index.html"), "<h1>e2e</h1>")
	w.ev.waitEvent(t, evPublished, 1)
	w.ev.waitEvent(t, evIdle, 2)
	var project int64
	for _, e := range w.ev.all() {
		if e.Event == evPublished {
			project = e.ProjectID
		}
	}
	if p, err := svc.GetProject(t.Context(), project); err != nil || p.Name != name {
		t.Fatalf("project %d: %+v %v", project, p, err)
	}
	if err := os.Rename(filepath.Join(dir, name, "e2e"), filepath.Join(dir, name, "e2e-old")); err != nil {
		t.Fatal(err)
	}
	w.ev.waitEvent(t, evRenamed, 1)
	w.ev.waitEvent(t, evIdle, 3)
	w.stop(t)
	if rep := onlyReport(t, svc, project); rep.Files != 1 {
		t.Fatalf("%+v", rep)
	}
}
