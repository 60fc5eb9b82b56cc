package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

type results struct {
	Seed    []seedTime
	Latency []latency
	Startup startupTime
	Big     *bigResult
	Small   []smallResult
	Serve   []wrkResult
	Sites   *sitesResult
	CLI     *cliResult
	Elapsed time.Duration
}

type seedTime struct {
	Reports int
	Took    time.Duration
}

type startupTime struct {
	Reports int
	Runs    []time.Duration // sorted
}

type bigRound struct {
	CP, CPSync, Upload time.Duration
	SHA                time.Duration // Go's SHA-256 of the same file, in the bench process
	CPU                time.Duration // the daemon's user+system time during the upload
	RSSBase, RSSGrowth int64
}

type bigResult struct {
	Bytes  int64
	Rounds []bigRound
}

type smallResult struct {
	Concurrency, Reports int
	PerSec               float64
}

// markdown renders every figure, with a verdict line per target.
func (r *results) markdown(sz sizes) string {
	var b strings.Builder
	var verdicts []string
	verdict := func(ok bool, format string, args ...any) {
		mark := "MISSED"
		if ok {
			mark = "met"
		}
		verdicts = append(verdicts, fmt.Sprintf("| %s | %s |", fmt.Sprintf(format, args...), mark))
	}
	r.scaleTable(&b, verdict)
	r.startupTable(&b)
	r.bigTable(&b, verdict)
	r.smallTable(&b)
	r.serveTable(&b, sz, verdict)
	r.sitesTable(&b, sz, verdict)
	r.publishTable(&b, verdict)
	r.dedupTable(&b)
	if len(verdicts) > 0 {
		b.WriteString("### Targets\n\n| Target (measured) | |\n|---|---|\n")
		b.WriteString(strings.Join(verdicts, "\n") + "\n\n")
	}
	fmt.Fprintf(&b, "bench/api took %v.\n", r.Elapsed.Round(time.Second))
	return b.String()
}

func (r *results) scaleTable(b *strings.Builder, verdict func(bool, string, ...any)) {
	if len(r.Latency) == 0 {
		return
	}
	var steps []int
	var names []string
	cell := map[string]map[int]latency{}
	for _, l := range r.Latency {
		if !slices.Contains(steps, l.Reports) {
			steps = append(steps, l.Reports)
		}
		if cell[l.Endpoint] == nil {
			names = append(names, l.Endpoint)
			cell[l.Endpoint] = map[int]latency{}
		}
		cell[l.Endpoint][l.Reports] = l
	}
	first, last := steps[0], steps[len(steps)-1]
	b.WriteString("### API latency as the store grows\n\n")
	b.WriteString("One request at a time over a kept-alive connection; p50 / p99 in milliseconds, (n) requests, whole body read.\n\n")
	b.WriteString("| Endpoint |")
	for _, s := range steps {
		fmt.Fprintf(b, " %s reports |", thousands(s))
	}
	b.WriteString(" p50 growth |\n|---|")
	for range steps {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, n := range names {
		fmt.Fprintf(b, "| %s |", n)
		for _, s := range steps {
			l := cell[n][s]
			fmt.Fprintf(b, " %s / %s (%d) |", ms(l.P50), ms(l.P99), l.N)
		}
		growth := float64(cell[n][last].P50) / float64(cell[n][first].P50)
		fmt.Fprintf(b, " %.2fx |\n", growth)
	}
	b.WriteString("\n")
	if len(r.Seed) > 0 {
		b.WriteString("Seeding through the store (bulk transactions + one tiny file per report): ")
		var parts []string
		for _, s := range r.Seed {
			parts = append(parts, fmt.Sprintf("to %s in %v", thousands(s.Reports), s.Took.Round(time.Millisecond)))
		}
		b.WriteString(strings.Join(parts, ", ") + ".\n\n")
	}
	for _, n := range names {
		f, l := cell[n][first], cell[n][last]
		switch {
		case n == "GET /api/projects":
			verdict(l.P50 <= 10*time.Millisecond, "list projects p50 <= 10 ms at %s reports (%s ms)", thousands(last), ms(l.P50))
		case strings.HasPrefix(n, "GET /api/reports?projectId"), n == "GET /api/reports/{id}":
			// Flat: within 1.5x, or under half a millisecond of difference (noise at this scale).
			flat := float64(l.P50) <= 1.5*float64(f.P50) || l.P50-f.P50 < 500*time.Microsecond
			verdict(flat, "%s flat from %s to %s reports (p50 %s -> %s ms)", n, thousands(first), thousands(last), ms(f.P50), ms(l.P50))
		}
	}
}

func (r *results) startupTable(b *strings.Builder) {
	if len(r.Startup.Runs) == 0 {
		return
	}
	runs := r.Startup.Runs
	fmt.Fprintf(b, "### Start-up\n\nFrom exec of `reportd serve` to the first 200 from GET /api/reports/ping, with %s reports (and their files) in the store; %d runs.\n\n",
		thousands(r.Startup.Reports), len(runs))
	fmt.Fprintf(b, "| min | median | max |\n|---|---|---|\n| %s ms | %s ms | %s ms |\n\n", ms(runs[0]), ms(runs[len(runs)/2]), ms(runs[len(runs)-1]))
}

func (r *results) bigTable(b *strings.Builder, verdict func(bool, string, ...any)) {
	if r.Big == nil {
		return
	}
	mib := float64(r.Big.Bytes) / (1 << 20)
	rate := func(d time.Duration) float64 { return mib / d.Seconds() }
	fmt.Fprintf(b, "### Upload of one %s MiB file\n\n", thousands(int(mib)))
	b.WriteString("POST /api/reports (multipart, streamed by a Go client) against `cp` of the same file on the same disk, alternating. ")
	b.WriteString("The daemon fsyncs the file and its directory before it answers, so `cp` + `sync FILE` is the like-for-like baseline; plain `cp` leaves the data in the page cache.\n\n")
	b.WriteString("The SHA-256 column is Go's crypto/sha256 over the same file in the benchmark process: the daemon must hash every byte (ETag, PDF cache key), and on this CPU that alone takes about as long as `cp` + fsync of the whole file.\n\n")
	b.WriteString("| Round | cp | cp + fsync | SHA-256 only | upload | upload / cp | upload / (cp + fsync) | daemon CPU | daemon RSS before | RSS growth |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var bestUp, bestCP, bestSync, bestSHA time.Duration
	var maxGrowth int64
	for i, x := range r.Big.Rounds {
		fmt.Fprintf(b, "| %d | %.0f MiB/s | %.0f MiB/s | %.0f MiB/s | %.0f MiB/s | %.2fx | %.2fx | %.2f s | %d MiB | %.1f MiB |\n", i+1,
			rate(x.CP), rate(x.CPSync), rate(x.SHA), rate(x.Upload), x.CP.Seconds()/x.Upload.Seconds(), x.CPSync.Seconds()/x.Upload.Seconds(),
			x.CPU.Seconds(), x.RSSBase>>20, float64(x.RSSGrowth)/(1<<20))
		bestUp, bestCP, bestSync, bestSHA = minNZ(bestUp, x.Upload), minNZ(bestCP, x.CP), minNZ(bestSync, x.CPSync), minNZ(bestSHA, x.SHA)
		maxGrowth = max(maxGrowth, x.RSSGrowth)
	}
	fmt.Fprintf(b, "| best | %.0f MiB/s | %.0f MiB/s | %.0f MiB/s | %.0f MiB/s | %.2fx | %.2fx | | | %.1f MiB (max) |\n\n",
		rate(bestCP), rate(bestSync), rate(bestSHA), rate(bestUp), bestCP.Seconds()/bestUp.Seconds(), bestSync.Seconds()/bestUp.Seconds(), float64(maxGrowth)/(1<<20))
	verdict(bestSync.Seconds()/bestUp.Seconds() >= 0.7, "upload >= 0.7x cp + fsync (%.2fx; %.2fx of page-cache cp)", bestSync.Seconds()/bestUp.Seconds(), bestCP.Seconds()/bestUp.Seconds())
	verdict(maxGrowth < 64<<20, "daemon RSS growth < 64 MiB during the upload (%.1f MiB)", float64(maxGrowth)/(1<<20))
}

func (r *results) smallTable(b *strings.Builder) {
	if len(r.Small) == 0 {
		return
	}
	b.WriteString("### Small uploads in parallel\n\n2 KiB Markdown reports; each is fsynced (file, directory) and committed to bbolt before the 201.\n\n")
	b.WriteString("| Concurrency | Reports | Reports/s |\n|---|---|---|\n")
	for _, s := range r.Small {
		fmt.Fprintf(b, "| %d | %d | %.0f |\n", s.Concurrency, s.Reports, s.PerSec)
	}
	b.WriteString("\n")
}

func (r *results) serveTable(b *strings.Builder, sz sizes, verdict func(bool, string, ...any)) {
	if len(r.Serve) == 0 {
		return
	}
	fmt.Fprintf(b, "### Serving next to nginx\n\n`wrk -t%d -c%d --latency` for %v per run on the same stored file; nginx with Debian's stock settings (sendfile, tcp_nopush, access log, a worker per core). After a 1 s warm-up of every URL, each server ran %d times, alternating with the others; the best run of each is shown.\n\n", wrkThreads, wrkConns, sz.WrkFor, serveRounds)
	b.WriteString("| File | Server | Requests/s | MiB/s | p50 | p99 | vs nginx |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Serve {
		fmt.Fprintf(b, "| %s | %s | %.0f | %.0f | %s | %s | %.2fx |\n", s.File, s.Server, s.RPS, s.RPS*float64(s.Size)/(1<<20), s.P50, s.P99, s.Ratio)
	}
	b.WriteString("\n")
	for _, s := range r.Serve {
		if s.Size >= 1<<20 && s.Server != "nginx" && s.Server != "reportd /uploads/" {
			verdict(s.Ratio >= 0.8, "%s %s >= 0.8x nginx (%.2fx)", s.File, s.Server, s.Ratio)
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func minNZ(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
