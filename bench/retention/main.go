// Command retention measures one retention sweep of a large store on the
// real daemon, and GET /api/projects while it runs.
//
// It seeds -reports reports over -projects projects straight into bbolt
// (boltstore.BulkLoad, with a tiny real file each), 10 groups of name and
// branch per project, starts `reportd serve` on loopback with
// retention.keep_last = -keep and the sweeper off, measures GET
// /api/projects alone, then runs one pass over every project with POST
// /api/prune (service.Prune, the function the sweeper calls) while a loop
// keeps measuring GET /api/projects. It prints the pass's time and what it
// removed, and p50/p99/max of the API before and during the pass.
//
//	go run ./bench/retention                 # 100,000 reports, 1,000 projects
//	go run ./bench/retention -reports 10000 -projects 100
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testbin"
)

func main() {
	reports := flag.Int("reports", 100_000, "reports to seed")
	projects := flag.Int("projects", 1_000, "projects to spread them over")
	keep := flag.Int("keep", 5, "retention.keep_last (each project has 10 groups of reports)")
	baseline := flag.Int("baseline", 300, "GET /api/projects requests measured before the pass")
	maxDuring := flag.Int("max-during", 200_000, "at most this many requests during the pass")
	work := flag.String("work", "", "scratch directory (default: a temp dir, removed after)")
	flag.Parse()
	if err := run(*reports, *projects, *keep, *baseline, *maxDuring, *work); err != nil {
		fmt.Fprintln(os.Stderr, "bench/retention:", err)
		os.Exit(1)
	}
}

func run(reports, projects, keep, baseline, maxDuring int, work string) error {
	work, cleanup, err := benchkit.WorkDir(work, "reportd-bench-retention-")
	if err != nil {
		return err
	}
	defer cleanup()
	bins := filepath.Join(work, "bin")
	fmt.Println("building reportd ...")
	if err := testbin.Build(bins, "reportd"); err != nil {
		return err
	}
	dataDir := filepath.Join(work, "data")
	start := time.Now()
	if err := seed(dataDir, reports, projects); err != nil {
		return err
	}
	fmt.Printf("seeded %d reports over %d projects in %v\n", reports, projects, time.Since(start).Round(time.Millisecond))

	d, err := testbin.Start(filepath.Join(bins, "reportd"), testbin.Options{DataDir: dataDir, Env: []string{
		"REPORTD_RETENTION_INTERVAL=0", "REPORTD_RETENTION_KEEP_LAST=" + strconv.Itoa(keep),
		"REPORTD_DASHBOARD=false", "REPORTD_LOG_LEVEL=info"}})
	if err != nil {
		return err
	}
	defer d.Stop()
	client := &http.Client{Timeout: 30 * time.Second}
	base := d.URL()

	before, err := measure(client, base, baseline, nil)
	if err != nil {
		return err
	}
	type outcome struct {
		res  report.PruneResult
		took time.Duration
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		res, err := prune(base)
		done <- outcome{res, time.Since(start), err}
	}()
	stop := make(chan struct{})
	var o outcome
	go func() { o = <-done; close(stop) }()
	during, err := measure(client, base, maxDuring, stop)
	if err != nil {
		return err
	}
	<-stop
	if o.err != nil {
		return o.err
	}
	after, err := measure(client, base, baseline, nil)
	if err != nil {
		return err
	}
	var ps []report.Project
	if err := getJSON(client, base+"/api/projects", &ps); err != nil {
		return err
	}
	left := int64(0)
	for _, p := range ps {
		left += p.ReportCount
	}
	fmt.Printf("\nsweep: %d projects, %d reports removed (%d bytes) in %v (%.0f reports/s); %d reports left\n",
		o.res.Projects, len(o.res.Reports), o.res.Bytes, o.took.Round(time.Millisecond), float64(len(o.res.Reports))/o.took.Seconds(), left)
	fmt.Printf("GET /api/projects (%d projects), sequential, one client:\n", len(ps))
	fmt.Printf("  before  %s\n  during  %s\n  after   %s\n", before, during, after)
	return nil
}

// seed writes the store and a tiny file per report. Each project has 10
// groups (5 names x 2 branches) of equal size.
func seed(dataDir string, reports, projects int) error {
	dir := filepath.Join(dataDir, "uploads", "reports")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	store, err := boltstore.Open(filepath.Join(dataDir, "reportd.db"), report.Clock{Location: time.Local})
	if err != nil {
		return err
	}
	defer store.Close()
	now := time.Now().Truncate(time.Second)
	var ps []report.Project
	for i := 1; i <= projects; i++ {
		ps = append(ps, report.Project{ID: int64(i), Name: "project-" + strconv.Itoa(i), CreatedAt: report.LocalTime{Time: now.AddDate(0, 0, -60)}})
	}
	branches := []string{"main", "dev"}
	recs := make([]report.ReportRecord, 0, reports)
	for i := 1; i <= reports; i++ {
		body := fmt.Appendf(nil, "# Report %d\n\nSeeded for the retention benchmark.\n", i)
		g := (i / projects) % 10
		branch := branches[g%2]
		recs = append(recs, report.ReportRecord{
			Report: report.Report{ID: int64(i), ProjectID: int64(1 + (i-1)%projects), FileName: "report.md",
				Name: "suite-" + strconv.Itoa(g/2), Branch: &branch, FileType: report.MD,
				FilePath: "/uploads/reports/" + strconv.Itoa(i) + ".md", UploadTime: report.LocalTime{Time: now.Add(-time.Duration(reports-i) * time.Second)}},
			Size: int64(len(body)), SHA256: "0",
		})
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".md"), body, 0o640); err != nil {
			return err
		}
	}
	return store.BulkLoad(context.Background(), ps, recs)
}

func prune(base string) (report.PruneResult, error) {
	var res report.PruneResult
	resp, err := http.Post(base+"/api/prune", "application/json", nil)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return res, fmt.Errorf("POST /api/prune: %s %.300s", resp.Status, b)
	}
	return res, json.Unmarshal(b, &res)
}

type stats struct {
	n             int
	p50, p99, max time.Duration
}

func (s stats) String() string {
	return fmt.Sprintf("n=%-6d p50 %-9v p99 %-9v max %v", s.n, s.p50.Round(10*time.Microsecond), s.p99.Round(10*time.Microsecond), s.max.Round(10*time.Microsecond))
}

// measure times up to n sequential GET /api/projects, stopping early
// when stop closes (nil: never).
func measure(client *http.Client, base string, n int, stop <-chan struct{}) (stats, error) {
	var lat []time.Duration
	for len(lat) < n {
		if stop != nil {
			select {
			case <-stop:
				n = 0
				continue
			default:
			}
		}
		start := time.Now()
		resp, err := client.Get(base + "/api/projects")
		if err != nil {
			return stats{}, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return stats{}, fmt.Errorf("GET /api/projects: %v %v", resp.Status, err)
		}
		lat = append(lat, time.Since(start))
	}
	if len(lat) == 0 {
		return stats{}, nil
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	return stats{n: len(lat), p50: at(0.50), p99: at(0.99), max: lat[len(lat)-1]}, nil
}

func getJSON(client *http.Client, url string, v any) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
