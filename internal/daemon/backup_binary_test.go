package daemon

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reportd/reportd/internal/testbin"
)

// TestBackupRestoreBinary is the operator's round trip with the real
// binary: `reportd backup --data-dir D --out F` while `reportd serve` holds
// D (on a port the backup command is not told), `reportd restore` into a
// new directory, and a second daemon serving the same bytes from it.
func TestBackupRestoreBinary(t *testing.T) {
	dir := t.TempDir()
	p := startReportd(t, dir)
	proj := createProject(t, at(p, ""), "roundtrip")
	sums := map[int64]string{}
	for i := range 5 {
		content := markdown(fmt.Sprint("rt", i), 1000*(i+1))
		st, r, e, err := upload(httpClient, at(p, ""), proj.ID, "md", fmt.Sprintf("rt%d.md", i), content)
		if st != http.StatusCreated {
			t.Fatalf("upload: %d %v %v", st, e, err)
		}
		sums[r.ID] = sum(content)
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	run := func(args ...string) string {
		b, err := testbin.Command(bins.Path(t, "reportd"), append(args, "--config", testbin.EmptyConfig)...).CombinedOutput()
		if err != nil {
			t.Fatalf("reportd %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	if o := run("backup", "--data-dir", dir, "--out", out); !strings.Contains(o, "checksums verified") {
		t.Errorf("backup said: %s", o)
	}
	if err := stopWith(t, p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	run("restore", "--in", out, "--data-dir", restored)
	run("check", "--data-dir", restored)

	p2 := startReportd(t, restored)
	var reps []apiReport
	getJSON(t, at(p2, "/api/reports"), &reps)
	if len(reps) != len(sums) {
		t.Fatalf("restored %d reports, want %d", len(reps), len(sums))
	}
	for _, r := range reps {
		if sum(getBody(t, at(p2, fmt.Sprintf("/api/reports/%d/download", r.ID)))) != sums[r.ID] {
			t.Errorf("report %d differs after restore", r.ID)
		}
	}
}
