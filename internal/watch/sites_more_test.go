package watch

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/dirzip"
	"github.com/reportd/reportd/internal/report"
)

// A process writing a file deep inside a site folder makes the folder busy.
func TestFoldersOpenForWriting(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	dir := t.TempDir()
	busySite, idleSite := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, filepath.Join(idleSite, "index.html"), "x")
	path := filepath.Join(busySite, "deep", "er", "index.html")
	write(t, path, "")
	cmd := exec.Command("sh", "-c", `exec 3>"$1"; echo ready; read line`, "sh", path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdout.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	if busy := foldersOpenForWriting([]string{busySite, idleSite}); !busy[busySite] || busy[idleSite] {
		t.Fatalf("busy = %v, want only %s", busy, busySite)
	}
	stdin.Write([]byte("\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the writer's exit to show", 10*time.Second, func() bool { return !foldersOpenForWriting([]string{busySite})[busySite] })
}

// A watcher killed while uploading a site leaves an "uploading" mark; the
// next run finds the site the server stored instead of sending it again.
func TestInterruptedSiteUploadIsNotPublishedTwice(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	site := filepath.Join(dir, "report")
	write(t, filepath.Join(site, "index.html"), "<h1>reached the server</h1>")
	write(t, filepath.Join(site, "data", "a.json"), "{}")
	tree, err := dirzip.Scan(site, dirzip.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := tree.Hash()
	st, err := openStore(state, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.markUploading(site, uploading{SHA256: sum, ProjectID: project, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.close()
	rep, err := svc.UploadReport(context.Background(), report.ReportUpload{ProjectID: project, FileType: report.HTML, Root: ".",
		File: report.Upload{FileName: "report.zip", Open: func() (io.ReadCloser, error) { return tree.Open(nil, nil), nil }}})
	if err != nil || !rep.IsSite() {
		t.Fatalf("upload: %+v %v", rep, err)
	}

	err, ev := runOnce(t, shared.URL(), watchArgs(dir, state, project, "--sites")...)
	if err != nil || ev.count(evPublished) != 1 {
		t.Fatalf("--once: %v\n%s", err, ev)
	}
	for _, e := range ev.all() {
		if e.Event == evPublished && (e.ReportID != rep.ID || !strings.HasPrefix(e.Message, "recovered")) {
			t.Fatalf("not recovered: %+v", e)
		}
	}
	onlyReport(t, svc, project)

	// Changed content later is a new version, published again; --replace
	// deletes the old one.
	write(t, filepath.Join(site, "index.html"), "<h1>second run</h1>")
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(site, "index.html"), old, old)
	err, ev = runOnce(t, shared.URL(), watchArgs(dir, state, project, "--sites", "--replace")...)
	if err != nil || ev.count(evPublished) != 1 || ev.count(evReplaced) != 1 {
		t.Fatalf("changed site: %v\n%s", err, ev)
	}
	if r := onlyReport(t, svc, project); r.ID == rep.ID {
		t.Fatalf("the old site is still the one listed: %+v", r)
	}
}
