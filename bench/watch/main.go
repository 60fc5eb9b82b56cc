// Command watch benchmarks `reportctl watch` against a real reportd on
// loopback: the latency from a file's last write to "published" (it should
// be close to --settle), and the throughput of a burst of files.
//
//	go run ./bench/watch                      # builds and starts reportd itself
//	go run ./bench/watch -settle 500ms -files 1000 -j 8
//
// It drives the real command (internal/watch) with the real client, reads
// its --json event log, and checks afterwards that the server holds every
// file exactly once.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/watch"
)

func main() {
	settle := flag.Duration("settle", 2*time.Second, "--settle of the watcher")
	samples := flag.Int("samples", 10, "files for the latency measurement, written one after another")
	files := flag.Int("files", 1000, "files in the burst")
	size := flag.Int("size", 4096, "bytes per burst file")
	jobs := flag.Int("j", 8, "-j of the watcher")
	server := flag.String("server", "", "use this running server instead of starting reportd")
	flag.Parse()
	if err := run(*settle, *samples, *files, *size, *jobs, *server); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(settle time.Duration, samples, files, size, jobs int, server string) error {
	work, err := os.MkdirTemp("", "bench-watch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if server == "" {
		stop, url, err := startReportd(work)
		if err != nil {
			return err
		}
		defer stop()
		server = url
	}
	svc, err := client.New(client.Options{Server: server})
	if err != nil {
		return err
	}
	ctx := context.Background()
	proj, err := svc.CreateProject(ctx, report.ProjectCreate{Name: fmt.Sprintf("bench-watch-%d", time.Now().Unix())})
	if err != nil {
		return err
	}
	dir := filepath.Join(work, "drop")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	log := &eventLog{}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	root := &cobra.Command{Use: "reportctl", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Bool("json", false, "")
	root.AddCommand(watch.NewCommand(watch.Deps{
		Client: func() (report.Service, error) { return svc, nil },
		Stdout: log, Stderr: os.Stderr,
	}))
	root.SetArgs([]string{"watch", dir, "--json", "--project", strconv.FormatInt(proj.ID, 10),
		"--state", filepath.Join(work, "state.db"), "--settle", settle.String(), "-j", strconv.Itoa(jobs)})
	go func() { done <- root.ExecuteContext(wctx) }()
	if err := log.wait("idle", 1, time.Minute); err != nil {
		return err
	}

	fmt.Printf("reportctl watch benchmark: %s/%s, %d CPUs, --settle %v, -j %d, server %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), settle, jobs, server)

	// Latency: each file is written in 4 chunks 100ms apart, then we wait
	// for it to be published before the next one.
	var lat []time.Duration
	for i := range samples {
		path := filepath.Join(dir, fmt.Sprintf("latency-%02d.md", i))
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		for c := range 4 {
			fmt.Fprintf(f, "## chunk %d\n%s\n", c, strings.Repeat("text ", 200))
			if c < 3 {
				time.Sleep(100 * time.Millisecond)
			}
		}
		last := time.Now()
		f.Close()
		ev, err := log.waitPath("published", path, time.Minute)
		if err != nil {
			return err
		}
		lat = append(lat, ev.Time.Sub(last))
	}
	slices.Sort(lat)
	fmt.Printf("latency, last write -> published (%d files): min %v  median %v  p90 %v  max %v  (median - settle = %v)\n",
		len(lat), ms(lat[0]), ms(lat[len(lat)/2]), ms(lat[len(lat)*9/10]), ms(lat[len(lat)-1]), ms(lat[len(lat)/2]-settle))

	// Burst: files written as fast as possible.
	before := log.count("published")
	body := bytes.Repeat([]byte("x"), size)
	start := time.Now()
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("burst-%04d.md", i)), body, 0o644); err != nil {
			return err
		}
	}
	written := time.Now()
	if err := log.wait("published", before+files, 10*time.Minute); err != nil {
		return err
	}
	lastPub := log.lastTime("published")
	total := lastPub.Sub(start)
	upload := lastPub.Sub(written) - settle
	fmt.Printf("burst of %d files x %d bytes: written in %v; all published %v after the first write, %v after the last\n",
		files, size, ms(written.Sub(start)), ms(total), ms(lastPub.Sub(written)))
	fmt.Printf("burst throughput: %.0f files/s end to end (incl. --settle); %.0f files/s publishing (excl. --settle)\n",
		float64(files)/total.Seconds(), float64(files)/upload.Seconds())

	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	list, err := svc.ListReports(ctx, &proj.ID)
	if err != nil {
		return err
	}
	names := map[string]int{}
	for _, r := range list {
		names[r.FileName]++
	}
	dups := 0
	for _, n := range names {
		if n > 1 {
			dups++
		}
	}
	fmt.Printf("check: %d reports on the server for %d files, %d names published more than once\n", len(list), samples+files, dups)
	if len(list) != samples+files || dups != 0 {
		return fmt.Errorf("exactly-once violated")
	}
	return nil
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// eventLog parses the watcher's JSON lines.
type eventLog struct {
	mu     sync.Mutex
	buf    []byte
	events []watch.Event
}

func (l *eventLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var ev watch.Event
		if json.Unmarshal(l.buf[:i], &ev) == nil {
			l.events = append(l.events, ev)
		}
		l.buf = l.buf[i+1:]
	}
}

func (l *eventLog) find(pred func(watch.Event) bool) (n int, last watch.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.events {
		if pred(ev) {
			n, last = n+1, ev
		}
	}
	return n, last
}

func (l *eventLog) count(kind string) int {
	n, _ := l.find(func(e watch.Event) bool { return e.Event == kind })
	return n
}

func (l *eventLog) lastTime(kind string) time.Time {
	_, ev := l.find(func(e watch.Event) bool { return e.Event == kind })
	return ev.Time
}

func (l *eventLog) wait(kind string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for l.count(kind) < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %d %q events", n, kind)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func (l *eventLog) waitPath(kind, path string, timeout time.Duration) (watch.Event, error) {
	deadline := time.Now().Add(timeout)
	for {
		n, ev := l.find(func(e watch.Event) bool { return e.Event == kind && e.Path == path })
		if n > 0 {
			return ev, nil
		}
		if time.Now().After(deadline) {
			return ev, fmt.Errorf("timed out waiting for %s of %s", kind, path)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// startReportd builds and runs the daemon on a free loopback port.
func startReportd(work string) (stop func(), url string, err error) {
	if err := testbin.Build(work, "reportd"); err != nil {
		return nil, "", err
	}
	d, err := testbin.Start(filepath.Join(work, "reportd"), testbin.Options{DataDir: filepath.Join(work, "data")})
	if err != nil {
		return nil, "", err
	}
	return d.Stop, d.URL(), nil
}
