// Command smallci measures the upload a CI job makes most: many small
// report files. `reportctl upload 'DIR/*.md'` (its default parallelism)
// into reportd on its default bbolt store, next to `mc cp --recursive` (its
// default concurrency) into versitygw's posix backend, in interleaved
// rounds on this machine; the ratio is mc's time over reportctl's (>= 1:
// reportctl is as fast or faster). It also times lone uploads, one after
// another, for the latency a single report pays.
//
//	go build -o /tmp/rd ./cmd/reportd && go build -o /tmp/rc ./cmd/reportctl &&
//	go run ./bench/smallci -reportd /tmp/rd -reportctl /tmp/rc -mc $(command -v mc)
//
// versitygw is found on PATH or in $(go env GOPATH)/bin (scripts/install-deps.sh
// test installs it); mc is `go install github.com/minio/mc@latest`.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

func main() {
	var (
		rd     = flag.String("reportd", "", "reportd binary (required)")
		rc     = flag.String("reportctl", "", "reportctl binary (required)")
		mc     = flag.String("mc", "mc", "MinIO client binary")
		vgw    = flag.String("versitygw", "", "versitygw binary (default: PATH, then GOPATH/bin)")
		files  = flag.Int("files", 300, "files per upload")
		size   = flag.Int("size", 20<<10, "bytes per file")
		rounds = flag.Int("rounds", 3, "interleaved rounds")
		lone   = flag.Int("lone", 40, "lone uploads, one after another")
		md     = flag.String("md", "", "write the results as Markdown to this file")
	)
	flag.Parse()
	if *rd == "" || *rc == "" {
		fmt.Fprintln(os.Stderr, "usage: smallci -reportd PATH -reportctl PATH [-mc PATH]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *rd, *rc, *mc, findVersity(*vgw), *files, *size, *rounds, *lone, *md); err != nil {
		fmt.Fprintln(os.Stderr, "bench/smallci:", err)
		os.Exit(1)
	}
}

func findVersity(v string) string {
	if v != "" {
		return v
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	return filepath.Join(strings.Split(strings.TrimSpace(string(out)), ":")[0], "bin", "versitygw")
}

type round struct{ reportctl, mc time.Duration }

func run(ctx context.Context, rd, rc, mc, vgw string, n, size, rounds, lone int, mdPath string) error {
	work, done, err := benchkit.WorkDir("", "reportd-smallci-")
	if err != nil {
		return err
	}
	defer done()
	src := filepath.Join(work, "reports")
	if err := writeFiles(src, n, size); err != nil {
		return err
	}
	api, stopRD, err := start(ctx, rd, []string{"serve"}, func(port string) []string {
		return []string{"REPORTD_ADDR=127.0.0.1:" + port, "REPORTD_DATA_DIR=" + filepath.Join(work, "data"),
			"REPORTD_CONTENT_ADDR=127.0.0.1:0", "REPORTD_CONVERT_WARM_ON_START=false"}
	})
	if err != nil {
		return err
	}
	defer stopRD()
	s3, stopS3, err := start(ctx, vgw, nil, nil)
	if err != nil {
		return err
	}
	defer stopS3()
	mcDir := filepath.Join(work, "mc")
	mcRun := func(args ...string) error {
		out, err := exec.CommandContext(ctx, mc, append([]string{"--config-dir", mcDir, "--quiet", "--no-color"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mc %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := mcRun("alias", "set", "b", s3, "bench", "benchsecret"); err != nil {
		return err
	}
	if err := mcRun("mb", "b/reports"); err != nil {
		return err
	}
	project, err := benchkit.CreateProject(ctx, api, "smallci")
	if err != nil {
		return err
	}
	var rs []round
	for i := range rounds {
		var r round
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, rc, "upload", filepath.Join(src, "*.md"), "--project", project, "--server", api, "--no-ci-metadata", "--json")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("reportctl upload: %v: %s", err, tail(out))
		}
		r.reportctl = time.Since(t0)
		t0 = time.Now()
		if err := mcRun("cp", "--recursive", src+"/", "b/reports/round"+strconv.Itoa(i)+"/"); err != nil {
			return err
		}
		r.mc = time.Since(t0)
		benchkit.Logf("round %d: reportctl %v, mc cp %v: %.2fx", i+1, r.reportctl.Round(time.Millisecond), r.mc.Round(time.Millisecond), float64(r.mc)/float64(r.reportctl))
		rs = append(rs, r)
	}
	lat, err := loneUploads(ctx, api, project, lone)
	if err != nil {
		return err
	}
	return benchkit.Results(markdown(n, size, rs, lat), mdPath)
}

func writeFiles(dir string, n, size int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	line := []byte("| test case | passed | 12 ms | a line of a small Markdown report |\n")
	for i := range n {
		b := bytes.Repeat(line, size/len(line)+1)[:size]
		copy(b, fmt.Sprintf("# Report %d\n\n", i))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%03d.md", i)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// start runs a server on a free loopback port and waits until it accepts
// connections. reportd gets its port through env; versitygw through flags.
func start(ctx context.Context, bin string, args []string, env func(port string) []string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = os.Environ()
	if env != nil {
		cmd.Env = append(cmd.Env, env(port)...)
	} else {
		root, err := os.MkdirTemp("", "smallci-s3-")
		if err != nil {
			return "", nil, err
		}
		cmd = exec.CommandContext(ctx, bin, "--port", "127.0.0.1:"+port, "--quiet", "posix", root)
		cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID=bench", "ROOT_SECRET_ACCESS_KEY=benchsecret")
		defer func() {
			go func() { cmd.Wait(); os.RemoveAll(root) }()
		}()
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Signal(syscall.SIGTERM) }
	if err := benchkit.WaitListening("127.0.0.1:"+port, 60*time.Second); err != nil {
		stop()
		return "", nil, fmt.Errorf("%s: %w", bin, err)
	}
	return "http://127.0.0.1:" + port, stop, nil
}

// loneUploads posts one 20 KB Markdown report at a time and returns the
// sorted latencies.
func loneUploads(ctx context.Context, api, project string, n int) ([]time.Duration, error) {
	body := bytes.Repeat([]byte("a lone report line\n"), 1000)
	var lat []time.Duration
	for range n {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		w.WriteField("projectId", project)
		w.WriteField("fileType", "md")
		fw, _ := w.CreateFormFile("file", "lone.md")
		fw.Write(body)
		w.Close()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api+"/api/reports", &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return nil, fmt.Errorf("lone upload: %s", resp.Status)
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat, nil
}

func markdown(n, size int, rs []round, lat []time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Small CI uploads: %d files of %d KiB\n\n`reportctl upload 'DIR/*.md'` (default -j) into reportd on bbolt, next to `mc cp --recursive` (default concurrency) into versitygw posix, interleaved; load average %s.\n\n",
		n, size>>10, loadavg())
	b.WriteString("| Round | reportctl | mc cp | mc / reportctl |\n|---|---|---|---|\n")
	var ratios []float64
	for i, r := range rs {
		ratio := float64(r.mc) / float64(r.reportctl)
		ratios = append(ratios, ratio)
		fmt.Fprintf(&b, "| %d | %d ms | %d ms | %.2fx |\n", i+1, r.reportctl.Milliseconds(), r.mc.Milliseconds(), ratio)
	}
	sort.Float64s(ratios)
	fmt.Fprintf(&b, "\nMedian ratio %.2fx (target >= 1x). Lone 20 KB uploads, one after another: p50 %.1f ms, p95 %.1f ms (%d uploads).\n",
		ratios[len(ratios)/2], ms(benchkit.Pct(lat, 50)), ms(benchkit.Pct(lat, 95)), len(lat))
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
