package daemon

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The sweeper of the shipped binary, at a short interval, applies the
// server default (keep the newest report of each name and branch) on
// its own: counters, files and metrics follow, and it stops cleanly.
func TestRetentionSweeperRuns(t *testing.T) {
	dir := t.TempDir()
	d := startReportd(t, dir, "REPORTD_RETENTION_INTERVAL=100ms", "REPORTD_RETENTION_KEEP_LAST=1", "REPORTD_LOG_LEVEL=info")
	base := d.URL()
	p := createProject(t, base, "swept")
	var last apiReport
	for i := range 3 {
		st, r, e, err := upload(httpClient, base, p.ID, "md", "same.md", markdown("s", 100+i))
		if err != nil || st != http.StatusCreated {
			t.Fatalf("upload: %d %v %v", st, e, err)
		}
		last = r
	}
	deadline := waitAfter()
	for {
		var got apiProject
		getJSON(t, base+"/api/projects/"+strconv.FormatInt(p.ID, 10), &got)
		if got.ReportCount == 1 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("the sweeper did not prune: reportCount %d\n%s", got.ReportCount, d.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The count drops when the rows go; the pass removes their files and
	// counts them after that.
	metrics := ""
	for !strings.Contains(metrics, "reportd_retention_reports_removed_total 2") {
		select {
		case <-deadline:
			t.Fatalf("the second pass was never counted:\n%s\n%s", metrics, d.Log())
		case <-time.After(50 * time.Millisecond):
		}
		metrics = string(getBody(t, base+"/metrics"))
	}
	var left []apiReport
	getJSON(t, base+"/api/reports?projectId="+strconv.FormatInt(p.ID, 10), &left)
	if len(left) != 1 || left[0].ID != last.ID {
		t.Fatalf("left %+v, want only the newest %d", left, last.ID)
	}
	files, _ := os.ReadDir(filepath.Join(dir, "uploads", "reports"))
	if len(files) != 1 || files[0].Name() != filepath.Base(last.FilePath) {
		t.Fatalf("files left: %v", files)
	}
	for _, want := range []string{"reportd_retention_reports_removed_total 2", "reportd_retention_bytes_removed_total 201", "reportd_retention_last_pass_timestamp_seconds "} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := stopWith(t, d, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, d.Log())
	}
	if log := d.Log(); !strings.Contains(log, "retention pass") || !strings.Contains(log, "reports_removed=") {
		t.Errorf("no retention log line:\n%s", log)
	}
}
