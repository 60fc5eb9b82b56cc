package watch

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// A watcher killed mid-upload (SIGKILL, power loss) leaves an "uploading"
// mark. The next run must find the report the server stored instead of
// publishing the file a second time, and must still publish a file whose
// upload never reached the server.
func TestInterruptedUploadIsNotPublishedTwice(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	want := map[string][]byte{
		"reached.md":  write(t, filepath.Join(dir, "reached.md"), "# uploaded, then the watcher died\n"),
		"reached.pdf": write(t, filepath.Join(dir, "reached.pdf"), "%PDF-1.4\n% uploaded, then the watcher died\n%%EOF\n"),
		"lost.md":     write(t, filepath.Join(dir, "lost.md"), "# the watcher died before sending\n"),
	}
	st, err := openStore(state, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	for name, content := range want {
		path := filepath.Join(dir, name)
		sum, size, _ := hashFile(path)
		if err := st.markUploading(path, uploading{SHA256: sum, Size: size, ProjectID: project, Started: started}); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "lost") {
			continue
		}
		typ, _ := report.TypeOfName(name)
		_, err := svc.UploadReport(context.Background(), report.ReportUpload{ProjectID: project, FileType: typ, File: report.Upload{
			FileName: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil }}})
		if err != nil {
			t.Fatal(err)
		}
	}
	st.close()

	err, ev := runOnce(t, shared.URL(), watchArgs(dir, state, project)...)
	if err != nil {
		t.Fatalf("--once: %v\n%s", err, ev)
	}
	recovered := 0
	for _, e := range ev.all() {
		if e.Event == evPublished && strings.HasPrefix(e.Message, "recovered") {
			recovered++
		}
	}
	if recovered != 2 || ev.count(evPublished) != 3 {
		t.Fatalf("%d recovered of %d published, want 2 of 3\n%s", recovered, ev.count(evPublished), ev)
	}
	assertPublished(t, shared, svc, project, want)
}
