// Command slowreaders measures what slow and hostile clients do to the
// clients that behave (issue 21): with 1,100 readers that ask for a large
// file and never read it, and 200 header/body trickles, all reconnecting
// whenever reportd drops them, against the API listener and then against
// the content origin, how many uploads per second do normal clients still
// get compared with no attack, and how long does a ping take on a new
// connection (p50/p99/max, a failure counted as its timeout)?
//
//	go build -o /tmp/reportd ./cmd/reportd
//	go run ./bench/slowreaders -reportd /tmp/reportd [-md out.md] [-quick]
//
// The attackers dial from distinct loopback addresses (127.1.x.y), the
// normal clients from 127.0.0.1. reportd runs with its defaults
// (max_connections 1024 on each listener). bench/run.sh runs it; to
// compare with another build, pass that build's binary (-label names it).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

func main() {
	bin := flag.String("reportd", "", "reportd binary to measure")
	work := flag.String("work", "", "scratch directory (default: a temp dir, removed)")
	mdPath := flag.String("md", "", "also write the Markdown results here")
	label := flag.String("label", "", "name of this build in the results (default: the binary's version)")
	quick := flag.Bool("quick", false, "small sizes, a smoke test of the harness")
	readers := flag.Int("readers", 1100, "slow readers")
	trickles := flag.Int("trickles", 200, "header/body trickles")
	measure := flag.Duration("measure", 20*time.Second, "measuring time of each phase")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: slowreaders -reportd BINARY [-md FILE] [-quick]")
		os.Exit(2)
	}
	if *quick {
		*readers, *trickles, *measure = 150, 30, 5*time.Second
	}
	raiseNoFile()
	dir, done, err := benchkit.WorkDir(*work, "reportd-slowreaders-")
	if err != nil {
		fail(err)
	}
	defer done()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	b := &bench{bin: *bin, dir: dir, readers: *readers, trickles: *trickles, measure: *measure}
	if b.label = *label; b.label == "" {
		out, _ := exec.Command(*bin, "version").Output()
		b.label = strings.TrimSpace(string(out))
	}
	if err := b.run(); err != nil {
		b.stop()
		fail(err)
	}
	b.stop()
	if err := benchkit.Results(b.markdown(), *mdPath); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "slowreaders:", err)
	os.Exit(1)
}

// raiseNoFile lifts this process's open-file limit to its hard limit, as
// the systemd unit's LimitNOFILE does for reportd: 1,300 attackers and the
// normal clients need more than the usual 1,024.
func raiseNoFile() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
	if l.Cur < 8192 {
		benchkit.Logf("warning: open-file limit %d; 1,300 attackers need more (ulimit -n 65536)", l.Cur)
	}
}

type bench struct {
	bin, dir, label   string
	readers, trickles int
	measure           time.Duration

	cmd                  *exec.Cmd
	api, content         string // host:port
	project              int64
	bigAPI               string // path of a large download on the API
	bigHost, bigPath     string // a large page on the content origin
	smallHost, smallPath string // a small page on the content origin
	phases               []phase
	loadBefore           string
	loadAfter            string
}

// phase is what the normal clients got during one phase.
type phase struct {
	name              string
	uploads           int
	uploadErrs        int
	secs              float64
	pings             []time.Duration
	pingFails         int
	pingBusy          int // of the fails, busy answers (the rest: timeouts, resets)
	pages             int
	pageErrs          int
	contentPings      []time.Duration
	contentPingFails  int
	contentPingBusy   int
	guard             string // displaced / refused / cut on the attacked listener (from /metrics)
	attackersUp       int
	attackerReconnect int64
	load              string
}

func (b *bench) run() error {
	b.loadBefore = loadavg()
	if err := b.start(); err != nil {
		return err
	}
	if err := b.seed(); err != nil {
		return err
	}
	benchkit.Logf("%s: baseline (no attack), %v", b.label, b.measure)
	b.phases = append(b.phases, b.normal("no attack", nil))
	for _, target := range []string{"api", "content"} {
		ctx, cancel := context.WithCancel(context.Background())
		a := b.attack(ctx, target)
		// Let the attackers take their places before measuring.
		ramp := time.Now().Add(15 * time.Second)
		for time.Now().Before(ramp) && int(a.up.Load()) < (b.readers+b.trickles)*9/10 {
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(3 * time.Second)
		benchkit.Logf("%s: %d slow readers and %d trickles on the %s listener (%d connected), %v", b.label, b.readers, b.trickles, target, a.up.Load(), b.measure)
		before := b.guardCounters(target)
		p := b.normal(fmt.Sprintf("%d slow readers + %d trickles on the %s listener", b.readers, b.trickles, map[string]string{"api": "API", "content": "content origin"}[target]), a)
		if after := b.guardCounters(target); after != nil && before != nil {
			p.guard = fmt.Sprintf("%.0f / %.0f / %.0f", after[0]-before[0], after[1]-before[1], after[2]-before[2])
		}
		cancel()
		a.wg.Wait()
		b.phases = append(b.phases, p)
		time.Sleep(3 * time.Second) // the daemon notices the attackers are gone
	}
	b.loadAfter = loadavg()
	return nil
}

// guardCounters reads reportd_connections_displaced_total,
// reportd_connections_refused_total and reportd_responses_cut_total of a
// listener from /metrics; nil when the build has none.
func (b *bench) guardCounters(listener string) []float64 {
	res, err := http.Get("http://" + b.api + "/metrics")
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	out := make([]float64, 3)
	found := 0
	for _, line := range strings.Split(string(text), "\n") {
		for i, name := range []string{"reportd_connections_displaced_total", "reportd_connections_refused_total", "reportd_responses_cut_total"} {
			if strings.HasPrefix(line, name+`{listener="`+listener+`"} `) {
				out[i], _ = strconv.ParseFloat(strings.Fields(line)[1], 64)
				found++
			}
		}
	}
	if found < 3 {
		return nil
	}
	return out
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// start runs reportd serve with its defaults on two free loopback ports.
func (b *bench) start() error {
	api, content := freePort(), freePort()
	b.api, b.content = "127.0.0.1:"+strconv.Itoa(api), "127.0.0.1:"+strconv.Itoa(content)
	logf, err := os.Create(filepath.Join(b.dir, "reportd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	data := filepath.Join(b.dir, "data")
	os.RemoveAll(data)
	cmd := exec.Command(b.bin, "serve", "--config", os.DevNull, "--addr", b.api, "--data-dir", data)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir(),
		"REPORTD_DASHBOARD=false", "REPORTD_CONVERT_WARM_ON_START=false", "REPORTD_CONTENT_ADDR=" + b.content}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	b.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get("http://" + b.api + "/api/reports/ping"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("reportd did not answer within 60s (log: %s)", logf.Name())
}

func (b *bench) stop() {
	benchkit.Stop(b.cmd)
	b.cmd = nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// seed makes a project, a 32 MiB Markdown report (the API's large
// download), a 32 MiB HTML report and a small one (the content origin's
// large and small pages).
func (b *bench) seed() error {
	res, err := http.Post("http://"+b.api+"/api/projects", "application/json", strings.NewReader(`{"name":"slow readers"}`))
	if err != nil {
		return err
	}
	var p struct{ ID int64 }
	err = decode(res, &p)
	if err != nil {
		return fmt.Errorf("project: %w", err)
	}
	b.project = p.ID
	big := bytes.Repeat([]byte("A line of a large report, long enough to matter.\n"), 32<<20/50)
	id, _, err := b.upload(http.DefaultClient, "md", "big.md", big)
	if err != nil {
		return err
	}
	b.bigAPI = fmt.Sprintf("/api/reports/%d/download", id)
	page := append([]byte("<!DOCTYPE html><title>big</title>\n"), bytes.Repeat([]byte("<p>A paragraph of a large page.</p>\n"), 32<<20/36)...)
	_, site, err := b.upload(http.DefaultClient, "html", "big.html", page)
	if err != nil {
		return err
	}
	u, err := url.Parse(site)
	if err != nil || site == "" {
		return fmt.Errorf("no siteUrl for the HTML report (%q)", site)
	}
	b.bigHost, b.bigPath = u.Host, u.RequestURI()
	_, site, err = b.upload(http.DefaultClient, "html", "small.html", []byte("<!DOCTYPE html><title>small</title><p>ok</p>\n"))
	if err != nil {
		return err
	}
	if u, err = url.Parse(site); err != nil {
		return err
	}
	b.smallHost, b.smallPath = u.Host, u.RequestURI()
	return nil
}

func decode(res *http.Response, v any) error {
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s: %s", res.Status, body)
	}
	return json.Unmarshal(body, v)
}

// upload posts a report: its id and siteUrl.
func (b *bench) upload(c *http.Client, fileType, name string, content []byte) (int64, string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("projectId", strconv.FormatInt(b.project, 10))
	mw.WriteField("fileType", fileType)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	res, err := c.Post("http://"+b.api+"/api/reports", mw.FormDataContentType(), &body)
	if err != nil {
		return 0, "", err
	}
	var r struct {
		ID      int64
		SiteURL string `json:"siteUrl"`
	}
	if err := decode(res, &r); err != nil {
		return 0, "", fmt.Errorf("upload %s: %w", name, err)
	}
	return r.ID, r.SiteURL, nil
}
