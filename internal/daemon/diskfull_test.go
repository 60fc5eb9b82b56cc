package daemon

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/testfixture"
)

// smallDisk is testfixture.SmallDisk.
func smallDisk(t *testing.T, size string) string { return testfixture.SmallDisk(t, size) }

// TestDiskFull fills a 4 MiB file system with uploads: the upload that no
// longer fits gets a clean StorageError body, nothing half-written stays
// behind, every acknowledged report still reads back, the daemon keeps
// serving (and accepts uploads again once space is freed), and check finds
// the store consistent.
func TestDiskFull(t *testing.T) {
	dir := smallDisk(t, "4m")
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "full")

	acked := map[int64]string{}
	var failure apiError
	for i := 0; i < 100; i++ {
		content := markdown(fmt.Sprint(i), 300<<10)
		st, r, e, err := upload(httpClient, base, proj.ID, "md", fmt.Sprintf("%d.md", i), content)
		if err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		if st == http.StatusCreated {
			acked[r.ID] = sum(content)
			continue
		}
		failure = e
		break
	}
	if failure.Type == "" {
		t.Fatal("4 MiB took 100 uploads of 300 KiB: the disk never filled")
	}
	t.Logf("%d uploads fitted; then: %+v", len(acked), failure)
	if failure.Type != "StorageError" || failure.Error != "StorageError: cannot store the file" {
		t.Errorf("full disk answered %+v, want a clean StorageError", failure)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "tmp", "*")); len(m) > 0 {
		t.Errorf("the failed upload left %v behind", m)
	}
	for id, want := range acked {
		if got := getBody(t, fmt.Sprintf("%s/api/reports/%d/download", base, id)); sum(got) != want {
			t.Errorf("report %d changed", id)
		}
	}
	var p apiProject
	getJSON(t, fmt.Sprintf("%s/api/projects/%d", base, proj.ID), &p)
	if p.ReportCount != int64(len(acked)) {
		t.Errorf("reportCount %d after the failure, %d acknowledged", p.ReportCount, len(acked))
	}

	// Free space; the daemon recovers without a restart.
	for id := range acked {
		req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/reports/%d", base, id), nil)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete %d on a full disk: %s", id, resp.Status)
		}
		delete(acked, id)
		break
	}
	if st, r, e, _ := upload(httpClient, base, proj.ID, "md", "after.md", markdown("after", 1000)); st != http.StatusCreated {
		t.Fatalf("upload after freeing space: %d %+v", st, e)
	} else {
		acked[r.ID] = ""
	}
	stop()
	rep, err := Check(context.Background(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean(false) || rep.Counts["reports"] != int64(len(acked)) {
		t.Fatalf("after a full disk: %+v (want %d reports)", rep, len(acked))
	}
}
