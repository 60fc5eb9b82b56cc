package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// crashCycles and crashWorkers are the minimums: at least 20
// SIGKILLs of the real binary, 32 concurrent uploads each time.
const (
	crashCycles  = 22
	crashWorkers = 32
)

// TestCrashNothingLost SIGKILLs the real reportd binary at random moments
// while 32 clients upload (and sometimes delete), restarts it each time,
// and then proves that nothing acknowledged was lost:
//   - after every kill, before any restart: no row lacks its file and no
//     counter or index entry disagrees with the rows (orphan files are
//     allowed here: the start-up sweep removes them);
//   - at the end: every upload that got 201 (and was not deleted with 204)
//     reads back byte-identical; every report present is one that a client
//     sent, with that client's bytes; deleted reports stay deleted;
//   - after the start-up sweep and a clean stop: no orphan, no missing
//     file, counters equal the real counts (check finds nothing).
func TestCrashNothingLost(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: skipped with -short")
	}
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.TimeZone = "UTC"
	env := []string{"REPORTD_TIME_ZONE=UTC"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)

	var (
		mu      sync.Mutex
		sent    = map[string]string{} // fileName -> sha256 of every attempt
		acked   = map[int64]string{}  // report id -> sha256, 201 received
		deleted = map[int64]bool{}    // 204 received
		tried   = map[int64]bool{}    // DELETE sent; without a 204 the outcome is unknown
		project int64
	)
	var cycleAcks atomic.Int64
	startDay := time.Now().UTC().Format("2006-01-02")

	worker := func(ctx context.Context, client *http.Client, base string, w, cycle int) {
		r := rand.New(rand.NewPCG(seed, uint64(cycle*1000+w)))
		for n := 0; ctx.Err() == nil; n++ {
			size := 1 + r.IntN(64<<10)
			if r.IntN(10) == 0 {
				size = 256<<10 + r.IntN(768<<10) // long enough to be cut mid-body
			}
			name := fmt.Sprintf("c%d-w%d-n%d.md", cycle, w, n)
			content := markdown(name, size)
			mu.Lock()
			sent[name] = sum(content)
			mu.Unlock()
			st, rep, _, err := upload(client, base, project, "md", name, content)
			if err != nil || st != http.StatusCreated {
				continue // killed mid-request: the outcome is unknown, and checked below
			}
			mu.Lock()
			acked[rep.ID] = sum(content)
			mu.Unlock()
			cycleAcks.Add(1)
			if r.IntN(8) == 0 {
				mu.Lock()
				tried[rep.ID] = true
				mu.Unlock()
				req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/reports/%d", base, rep.ID), nil)
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusNoContent {
						mu.Lock()
						deleted[rep.ID] = true
						mu.Unlock()
					}
				}
			}
		}
	}

	for cycle := range crashCycles {
		cycleAcks.Store(0)
		p := startReportd(t, dir, env...)
		base := at(p, "")
		if cycle == 0 {
			project = createProject(t, base, "crash").ID
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: crashWorkers}, Timeout: waitLong}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := range crashWorkers {
			wg.Add(1)
			go func() { defer wg.Done(); worker(ctx, client, base, w, cycle) }()
		}
		// The random moment: after a random number of this cycle's uploads
		// were acknowledged (so even a slow machine makes progress every
		// cycle), plus random jitter, with 32 uploads in every state.
		target := int64(1 + rng.IntN(48))
		waitFor(t, "uploads to be acknowledged", func() bool { return cycleAcks.Load() >= target })
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		p.Signal(syscall.SIGKILL)
		<-p.Done()
		cancel()
		wg.Wait()
		client.CloseIdleConnections()

		rep, err := Check(context.Background(), cfg, false)
		if err != nil {
			t.Fatalf("cycle %d: check: %v", cycle, err)
		}
		if len(rep.MissingFiles) > 0 || len(rep.Drift) > 0 {
			t.Fatalf("cycle %d: after SIGKILL rows lack files or counters drift: missing %v, drift %v", cycle, rep.MissingFiles, rep.Drift)
		}
	}

	// The start-up sweep runs; then every promise is checked over the API.
	p := startReportd(t, dir, env...)
	base := at(p, "")
	var reports []apiReport
	getJSON(t, base+"/api/reports", &reports)
	present := map[int64]bool{}
	for _, r := range reports {
		present[r.ID] = true
		got := sum(getBody(t, fmt.Sprintf("%s/api/reports/%d/download", base, r.ID)))
		if want, ok := acked[r.ID]; ok && got != want {
			t.Errorf("report %d (%s): acknowledged bytes changed", r.ID, r.FileName)
		}
		if want, ok := sent[r.FileName]; !ok || got != want {
			t.Errorf("report %d (%s): not the bytes any client sent", r.ID, r.FileName)
		}
		if deleted[r.ID] {
			t.Errorf("report %d: deleted with 204, but back after a crash", r.ID)
		}
	}
	lost := 0
	for id := range acked {
		if !tried[id] && !present[id] {
			lost++
			t.Errorf("report %d: got 201, lost after a crash", id)
		}
	}
	var proj apiProject
	getJSON(t, fmt.Sprintf("%s/api/projects/%d", base, project), &proj)
	if proj.ReportCount != int64(len(reports)) {
		t.Errorf("reportCount %d, real count %d", proj.ReportCount, len(reports))
	}
	if time.Now().UTC().Format("2006-01-02") == startDay && proj.TodayNewReports != int64(len(reports)) {
		t.Errorf("todayNewReports %d, real count %d", proj.TodayNewReports, len(reports))
	}
	if err := stopWith(t, p, syscall.SIGTERM); err != nil {
		t.Fatalf("final stop: %v", err)
	}
	rep, err := Check(context.Background(), cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean(false) {
		t.Fatalf("after the start-up sweep: %+v", rep)
	}
	t.Logf("%d cycles x %d workers: %d uploads attempted, %d acknowledged, %d deletes sent, %d acknowledged, %d present, %d lost",
		crashCycles, crashWorkers, len(sent), len(acked), len(tried), len(deleted), len(reports), lost)
	if os.Getenv("REPORTD_CRASH_KEEP") != "" {
		t.Logf("data dir: %s", dir)
	}
}
