package daemon

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupOfDamagedStore: a row whose file is already gone does not stop
// a backup (the rest is still worth saving) but is listed in the manifest,
// and the restored copy reports it instead of pretending to be clean.
func TestBackupOfDamagedStore(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "damaged")
	var paths []string
	for _, name := range []string{"a.md", "b.md"} {
		st, r, e, err := upload(httpClient, base, proj.ID, "md", name, markdown(name, 300))
		if st != http.StatusCreated {
			t.Fatalf("upload: %d %v %v", st, e, err)
		}
		paths = append(paths, r.FilePath)
	}
	stop()
	os.Remove(filepath.Join(dir, filepath.FromSlash(paths[0])))

	out := filepath.Join(t.TempDir(), "b.tar")
	m, err := Backup(context.Background(), c, out, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Missing) != 1 || m.Missing[0] != paths[0] || len(m.Entries) != 2 {
		t.Fatalf("manifest: missing %v, %d entries", m.Missing, len(m.Entries))
	}
	restored := filepath.Join(t.TempDir(), "r")
	o := runCLI(t, 1, "restore", "--in", out, "--data-dir", restored)
	if !strings.Contains(o, "missing file: report") || !strings.Contains(o, "check --repair") {
		t.Errorf("restore of a damaged backup said: %s", o)
	}
	runCLI(t, 0, "check", "--repair", "--data-dir", restored)
	runCLI(t, 0, "check", "--data-dir", restored)
}
