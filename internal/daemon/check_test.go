package daemon

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCheckAndRepair damages a stopped daemon's data in every way check
// knows about, then expects check to find each, --repair to fix each, and
// the daemon to serve consistent data afterwards.
func TestCheckAndRepair(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	p1 := createProject(t, base, "one")
	p2 := createProject(t, base, "two")
	var ids []int64
	for i := range 4 {
		st, r, e, err := upload(httpClient, base, p1.ID, "md", fmt.Sprintf("%d.md", i), markdown(fmt.Sprint(i), 500))
		if st != http.StatusCreated {
			t.Fatalf("upload: %d %v %v", st, e, err)
		}
		ids = append(ids, r.ID)
	}
	upload(httpClient, base, p2.ID, "md", "x.md", markdown("x", 100))
	stop()

	if rep, err := Check(context.Background(), c, false); err != nil || !rep.Clean(false) {
		t.Fatalf("fresh store not clean: %+v %v", rep, err)
	}

	// Damage: a report's file goes, a stray file and a temp file appear,
	// and the counters drift.
	os.Remove(filepath.Join(dir, "uploads", "reports", fmt.Sprintf("%d.md", ids[0])))
	os.WriteFile(filepath.Join(dir, "uploads", "reports", "999.md"), []byte("stray"), 0o600)
	os.WriteFile(filepath.Join(dir, "tmp", "upload-123"), []byte("half"), 0o600)
	db, err := bolt.Open(filepath.Join(dir, "reportd.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte("projects"))
		k := make([]byte, 8)
		binary.BigEndian.PutUint64(k, uint64(p2.ID))
		var row map[string]any
		json.Unmarshal(bk.Get(k), &row)
		row["k"] = 42 // reportCount
		b, _ := json.Marshal(row)
		if err := bk.Put(k, b); err != nil {
			return err
		}
		days := tx.Bucket([]byte("project_days"))
		cur := days.Cursor()
		dk, _ := cur.First() // p1's day counter
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, 7)
		return days.Put(append([]byte(nil), dk...), v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	rep, err := Check(context.Background(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.MissingFiles) != 1 || rep.MissingFiles[0].Report != ids[0] {
		t.Errorf("missing files: %+v", rep.MissingFiles)
	}
	if strings.Join(rep.Orphans, ",") != "uploads/reports/999.md" || strings.Join(rep.Staged, ",") != "tmp/upload-123" {
		t.Errorf("orphans: %v, staged: %v", rep.Orphans, rep.Staged)
	}
	drift := fmt.Sprint(rep.Drift)
	if !strings.Contains(drift, fmt.Sprintf("project %d: reportCount is 42, real count 1", p2.ID)) ||
		!strings.Contains(drift, fmt.Sprintf("project %d: 7 reports counted on", p1.ID)) {
		t.Errorf("drift: %v", drift)
	}
	out := runCLI(t, 1, "check", "--data-dir", dir)
	if !strings.Contains(out, "missing file: report") || !strings.Contains(out, "run with --repair") {
		t.Errorf("check output: %s", out)
	}

	out = runCLI(t, 0, "check", "--repair", "--data-dir", dir)
	for _, want := range []string{"dropped report", "removed orphan uploads/reports/999.md", "removed staged file tmp/upload-123", "fixed: project"} {
		if !strings.Contains(out, want) {
			t.Errorf("repair output lacks %q:\n%s", want, out)
		}
	}
	if rep, err := Check(context.Background(), c, false); err != nil || !rep.Clean(false) {
		t.Fatalf("after repair: %+v %v", rep, err)
	}

	s, _ = startServer(t, c)
	base = "http://" + s.Addr()
	for _, p := range []apiProject{p1, p2} {
		var got apiProject
		var reps []apiReport
		getJSON(t, fmt.Sprintf("%s/api/projects/%d", base, p.ID), &got)
		getJSON(t, fmt.Sprintf("%s/api/reports?projectId=%d", base, p.ID), &reps)
		if got.ReportCount != int64(len(reps)) || got.TodayNewReports != int64(len(reps)) {
			t.Errorf("project %d: counts %d/%d, real %d", p.ID, got.ReportCount, got.TodayNewReports, len(reps))
		}
	}
}

// TestCheckRefusesRunningDaemon: check needs the store to itself.
func TestCheckRefusesRunningDaemon(t *testing.T) {
	c := testConfig(t, t.TempDir())
	startServer(t, c)
	if _, err := Check(context.Background(), c, false); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("check on a running daemon's store: %v", err)
	}
}
