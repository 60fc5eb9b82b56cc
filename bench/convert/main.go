// Command convert benchmarks reportd's PDF conversion on this machine:
// p50/p95 per report type for warm engines and cached repeats, and the cold
// baselines (a fresh `soffice --convert-to pdf` and a fresh
// `chromium-headless-shell --print-to-pdf` per document), all in one run,
// plus the peak resident memory of the warm engines.
//
//	go run ./bench/convert [-n 40] [-cold 5] [-shapes 4000] [-lanes-only] [-lane=false] [-interval 250ms]
//	go run ./bench/convert -site 40 -n 5   # a coverage.py site: entry vs scope=site (site.go)
//	go run ./bench/convert -hostile 3 -n 20   # a one-page PDF while 3 hostile site walks run (hostile.go)
//	go run ./bench/convert -open-links 400 -n 3   # Markdown of "[a](" repeated, 400 KB (hostile.go)
//	go run ./bench/convert -http /tmp/reportd -gotenberg /tmp/gotenberg -n 15   # over HTTP (overhttp.go)
//
// It ends with the small-deck p50/p95 while a long deck converts (lanes.go).
//
// Figures are recorded in docs/conversion.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/report"
)

func main() {
	if reexec.Init() { // a conversion child (internal/convert/reexec.go)
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/convert:", err)
		os.Exit(1)
	}
}

type sample struct {
	name  string
	times []time.Duration
}

func (s sample) pct(p float64) time.Duration {
	t := slices.Clone(s.times)
	slices.Sort(t)
	i := int(float64(len(t)-1) * p)
	return t[i]
}

func run() error {
	n := flag.Int("n", 40, "measured conversions per type")
	cold := flag.Int("cold", 5, "cold baseline runs per engine")
	debug := flag.Bool("debug", false, "log each conversion's phases")
	testdata := flag.String("testdata", "", "fixture directory (default: internal/convert/testdata)")
	shapes := flag.Int("shapes", 4000, "text boxes in the long deck of the small-deck figure")
	lanesOnly := flag.Bool("lanes-only", false, "measure only small decks while a long deck converts")
	lane := flag.Bool("lane", true, "with the small-deck lane (false: the baseline without it)")
	interval := flag.Duration("interval", 250*time.Millisecond, "a small deck arrives this often while the long deck converts")
	spares := flag.Int("spares", 0, "Chromium pages made ahead of jobs (0: the default)")
	idle := flag.Duration("idle", 0, "wait this long after the warm-up, before the measured jobs (lets the spare pages fill)")
	only := flag.String("only", "", "comma-separated cases to measure warm (html,html+script,md,...); skips cached, cold and lanes")
	siteModules := flag.Int("site", 0, "only print a coverage.py site of this many modules, entry and scope=site, n times each (site.go)")
	largeMD := flag.Int("large-md", 0, "only convert one Markdown report of this many bytes and report Chromium's peak and idle memory")
	hostile := flag.Int("hostile", 0, "only measure a one-page PDF (-n times) while this many hostile site walks run (hostile.go)")
	hostileLimit := flag.Duration("hostile-limit", 2*time.Minute, "with -hostile: the longest a one-page PDF is waited for")
	openLinksKB := flag.Int("open-links", 0, "only render a Markdown of \"[a](\" repeated to this many KB, -n times (hostile.go)")
	httpBin := flag.String("http", "", "only measure the first GET /pdf of -n fresh small HTML and Markdown reports over HTTP, on this reportd binary (overhttp.go)")
	gotenbergBin := flag.String("gotenberg", "", "with -http: the same documents through this Gotenberg binary, interleaved")
	rounds := flag.Int("rounds", 3, "with -http: interleaved rounds")
	httpLog := flag.String("http-log", "", "with -http: keep reportd's debug log (JSON lines) in this file")
	settle := flag.Duration("settle", 5*time.Second, "with -http: wait this long after the servers start, so their start-up (engines warming) is not measured")
	gap := flag.Duration("gap", 0, "with -http: wait this long before each burst (after its uploads), so a burst does not find the pool the previous one used (0: back to back)")
	types := flag.String("types", "html,md", "with -http: the document types measured, in this order")
	flag.Parse()
	if *httpBin != "" {
		return overHTTP(*httpBin, *gotenbergBin, *httpLog, *rounds, *n, *settle, *gap, strings.Split(*types, ","))
	}
	if *testdata == "" {
		_, self, _, _ := runtime.Caller(0)
		*testdata = filepath.Join(filepath.Dir(self), "..", "..", "internal", "convert", "testdata")
	}
	work, err := os.MkdirTemp("", "bench-convert-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *lanesOnly {
		return lanes(*testdata, work, *shapes, *lane, *interval, quiet)
	}

	docs, err := fixtures(*testdata, work)
	if err != nil {
		return err
	}
	if *only != "" {
		names := strings.Split(*only, ",")
		docs = slices.DeleteFunc(docs, func(d doc) bool { return !slices.Contains(names, d.name) })
		if len(docs) == 0 {
			return fmt.Errorf("-only %q matches no case", *only)
		}
	}

	cfg := convert.DefaultConfig()
	cfg.CacheDir = filepath.Join(work, "cache")
	cfg.ChromiumSpares = *spares
	if *largeMD > 0 {
		cfg.JobTimeout = 5 * time.Minute // a large Markdown print on a shared machine
	}
	level := slog.LevelWarn
	if *debug {
		level = slog.LevelDebug
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	m, err := convert.New(cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	m.Start(context.Background())
	if *largeMD > 0 {
		return largeMarkdownMemory(m, work, *largeMD)
	}
	if *siteModules > 0 {
		return siteFigures(m, work, *siteModules, *n)
	}
	if *hostile > 0 {
		return hostileWalks(m, work, *hostile, *n, *hostileLimit)
	}
	if *openLinksKB > 0 {
		return openLinks(m, work, *openLinksKB*1000, *n)
	}

	peak := map[string]int64{}
	var peakMu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // sample engine memory for the whole warm phase
		defer close(sampled)
		for {
			for k, v := range m.EngineRSS() {
				peakMu.Lock()
				peak[k] = max(peak[k], v)
				peakMu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	loadBefore := loadavg()
	ctx := context.Background()
	var results []sample
	seq := 0
	convertOnce := func(d doc, key string) (time.Duration, error) {
		start := time.Now()
		f, err := m.PDF(ctx, convert.Job{ReportID: d.id, Type: d.typ, Src: d.path, ContentKey: key})
		if err != nil {
			return 0, fmt.Errorf("%s: %w", d.name, err)
		}
		f.Close()
		return time.Since(start), nil
	}
	fmt.Fprintf(os.Stderr, "warming up (cpus=%d, office workers=%d, chromium tabs=%d)...\n",
		runtime.NumCPU(), cfg.OfficeWorkers, cfg.ChromiumTabs)
	for _, d := range docs { // warm-up, not measured: engines start, filters load
		for range 3 {
			seq++
			if _, err := convertOnce(d, fmt.Sprintf("%064x", seq)); err != nil {
				return err
			}
		}
	}
	time.Sleep(*idle)
	for _, d := range docs {
		s := sample{name: d.name + " warm"}
		for range *n {
			seq++ // a new content key each time: a real conversion, never a cache hit
			t, err := convertOnce(d, fmt.Sprintf("%064x", seq))
			if err != nil {
				return err
			}
			s.times = append(s.times, t)
		}
		results = append(results, s)
	}
	if *only != "" {
		close(stop)
		<-sampled
		fmt.Printf("load average (1 min) at start %s, at end %s\n", loadBefore, loadavg())
		for _, s := range results {
			fmt.Printf("%-36s %5d %10s %10s\n", s.name, len(s.times), ms(s.pct(0.5)), ms(s.pct(0.95)))
		}
		fmt.Printf("peak memory (PSS): chromium %s\n", mib(peak["chromium"]))
		return nil
	}
	for _, d := range docs {
		if d.typ == report.PDF {
			continue
		}
		key := fmt.Sprintf("%064x", 1<<40+int(d.id))
		if _, err := convertOnce(d, key); err != nil {
			return err
		}
		s := sample{name: d.name + " cached"}
		for range *n {
			t, err := convertOnce(d, key)
			if err != nil {
				return err
			}
			s.times = append(s.times, t)
		}
		results = append(results, s)
	}
	close(stop)
	<-sampled

	// Cold baselines: one process per document, as a naive service would do.
	profile := filepath.Join(work, "lo-profile")
	sofficeCold := sample{name: "pptx cold soffice --convert-to pdf"}
	for i := range *cold + 1 {
		d := docByType(docs, report.PPTX)
		start := time.Now()
		cmd := exec.Command("soffice", "-env:UserInstallation=file://"+profile, "--headless",
			"--convert-to", "pdf", "--outdir", filepath.Join(work, "cold"), d.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("soffice: %v: %s", err, out)
		}
		if i > 0 { // the first run creates the profile; a fair baseline has one
			sofficeCold.times = append(sofficeCold.times, time.Since(start))
		}
	}
	chromeCold := sample{name: "html cold chromium --print-to-pdf"}
	shell, err := exec.LookPath("chromium-headless-shell")
	if err != nil {
		return err
	}
	for i := range *cold + 1 {
		d := docByType(docs, report.HTML)
		start := time.Now()
		cmd := exec.Command(shell, "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
			"--user-data-dir="+filepath.Join(work, fmt.Sprintf("chrome-%d", i)),
			"--print-to-pdf="+filepath.Join(work, "cold", "chrome.pdf"), "file://"+d.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("chromium: %v: %s", err, out)
		}
		if i > 0 {
			chromeCold.times = append(chromeCold.times, time.Since(start))
		}
	}
	results = append(results, sofficeCold, chromeCold)

	fmt.Printf("reportd PDF conversion benchmark — %s, %d CPUs, %s\n\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.Version())
	fmt.Printf("load average (1 min) at start %s, at end %s: other work on the machine inflates every figure\n\n",
		loadBefore, loadavg())
	fmt.Printf("%-36s %5s %10s %10s\n", "case", "n", "p50", "p95")
	for _, s := range results {
		fmt.Printf("%-36s %5d %10s %10s\n", s.name, len(s.times), ms(s.pct(0.5)), ms(s.pct(0.95)))
	}
	fmt.Printf("\npeak memory (PSS) of warm engines: chromium %s (browser + %d tabs), office %s (%d workers)\n",
		mib(peak["chromium"]), cfg.ChromiumTabs, mib(peak["office"]), cfg.OfficeWorkers)

	get := func(name string) time.Duration {
		for _, s := range results {
			if s.name == name {
				return s.pct(0.5)
			}
		}
		return -1
	}
	fmt.Println("\ntargets (p50):")
	check := func(label string, got, limit time.Duration) {
		verdict := "ok"
		if got > limit {
			verdict = "MISSED"
		}
		fmt.Printf("  %-30s %10s <= %-8s %s\n", label, ms(got), ms(limit), verdict)
	}
	check("html warm", get("html warm"), 60*time.Millisecond)
	check("md warm", get("md warm"), 80*time.Millisecond)
	check("pptx warm", get("pptx warm"), 100*time.Millisecond)
	worstCached := time.Duration(0)
	for _, s := range results {
		if strings.HasSuffix(s.name, " cached") {
			worstCached = max(worstCached, s.pct(0.5))
		}
	}
	check("cached (worst type)", worstCached, 3*time.Millisecond)
	speedup := float64(get("pptx cold soffice --convert-to pdf")) / float64(get("pptx warm"))
	verdict := "ok"
	if speedup < 8 {
		verdict = "MISSED"
	}
	fmt.Printf("  %-30s %9.1fx >= 8x       %s\n", "pptx warm vs cold soffice", speedup, verdict)
	fmt.Println()
	return lanes(*testdata, work, *shapes, *lane, *interval, quiet)
}

type doc struct {
	name string
	typ  report.FileType
	id   int64
	path string
}

func docByType(docs []doc, t report.FileType) doc {
	for _, d := range docs {
		if d.typ == t {
			return d
		}
	}
	return doc{}
}

// fixtures copies the test fixtures into work and adds a static HTML report
// (no timers, so it measures the engine rather than a page's own scripts).
func fixtures(testdata, work string) ([]doc, error) {
	src := []struct {
		name, file string
		typ        report.FileType
	}{
		{"html", "", report.HTML},
		{"html+script", "report.html", report.HTML},
		{"md", "report.md", report.MD},
		{"pdf", "sample.pdf", report.PDF},
		{"pptx", "deck.pptx", report.PPTX},
		{"ppt", "deck.ppt", report.PPT},
	}
	var docs []doc
	for i, s := range src {
		var b []byte
		var err error
		if s.file == "" {
			b = staticHTML()
		} else if b, err = os.ReadFile(filepath.Join(testdata, s.file)); err != nil {
			return nil, err
		}
		p := filepath.Join(work, fmt.Sprintf("%d%s", i+1, s.typ.Ext()))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
		docs = append(docs, doc{name: s.name, typ: s.typ, id: int64(i + 1), path: p})
	}
	return docs, nil
}

// staticHTML is a two-page report: headings, text in three scripts, a styled table.
func staticHTML() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Static report</title><style>
body{font-family:"Liberation Sans",sans-serif;margin:2em} h1{border-bottom:2px solid #333}
table{border-collapse:collapse;width:100%} td,th{border:1px solid #999;padding:4px 8px}
tr:nth-child(even){background:#eef}</style></head><body><h1>Static report — Café 你好</h1>`)
	for i := range 3 {
		fmt.Fprintf(&b, "<h2>Section %d</h2><p>%s</p>", i+1, strings.Repeat("Lorem ipsum dolor sit amet, résumé, 数据分析. ", 20))
	}
	b.WriteString("<table><tr><th>Region</th><th>Q1</th><th>Q2</th><th>Q3</th></tr>")
	for i := range 40 {
		fmt.Fprintf(&b, "<tr><td>Region %d</td><td>%d</td><td>%d</td><td>%d</td></tr>", i, i*17, i*23, i*31)
	}
	b.WriteString("</table></body></html>")
	return []byte(b.String())
}

// loadavg is the 1-minute load average, to judge how busy the machine was.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
