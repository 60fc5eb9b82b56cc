package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

const (
	nginxBin = "/usr/sbin/nginx"
	wrkBin   = "/usr/bin/wrk"
	// wrkArgs: the same load for both servers; two threads, 16 connections.
	wrkThreads, wrkConns = 2, 16
)

// serveRounds runs every server's wrk this many times, alternating,
// and keeps each one's best: a neighbour's burst on a shared machine
// then hurts one round, not the comparison (-serve-rounds).
var serveRounds = 2

// serving uploads a 10 MiB PDF and a 50 KiB HTML report through the API,
// then puts preview and download under wrk, and nginx serving the very
// same stored files, in the same run.
func (b *bench) serving(ctx context.Context) error {
	files := []struct {
		label, ext string
		size       int64
	}{{"10 MiB PDF", "pdf", 10 << 20}, {"50 KiB HTML", "html", 50 << 10}}
	ng, err := b.startNginx(ctx)
	if err != nil {
		return err
	}
	defer ng.stop()
	for _, f := range files {
		src := filepath.Join(b.work, "serve."+f.ext)
		if err := writeServeFile(src, f.ext, f.size); err != nil {
			return err
		}
		id, err := b.uploadFile(ctx, src, 2, f.ext)
		os.Remove(src)
		if err != nil {
			return err
		}
		ids := strconv.FormatInt(id, 10)
		runs := []struct{ server, url string }{
			{"nginx", ng.base + "/uploads/reports/" + ids + "." + f.ext},
			{"reportd preview", b.base + "/api/reports/" + ids + "/preview"},
			{"reportd download", b.base + "/api/reports/" + ids + "/download"},
			{"reportd /uploads/", b.base + "/uploads/reports/" + ids + "." + f.ext},
		}
		// A short unmeasured run per URL first: the first seconds after the
		// scale phase (a large heap being released, a file just fsynced)
		// were slower for whichever server came first.
		for _, r := range runs {
			if _, err := runWrk(ctx, r.url, time.Second); err != nil {
				return fmt.Errorf("%s warm-up: %w", r.server, err)
			}
		}
		best := map[string]wrkResult{}
		for round := range serveRounds {
			for _, r := range runs {
				w, err := runWrk(ctx, r.url, b.sz.WrkFor)
				if err != nil {
					return fmt.Errorf("%s: %w", r.server, err)
				}
				logf("%-12s %-18s round %d: %9.0f req/s %8.0f MiB/s  p50 %-8s p99 %s",
					f.label, r.server, round+1, w.RPS, w.RPS*float64(f.size)/(1<<20), w.P50, w.P99)
				if w.RPS > best[r.server].RPS {
					best[r.server] = w
				}
			}
		}
		for _, r := range runs {
			w := best[r.server]
			w.File, w.Server, w.Size = f.label, r.server, f.size
			w.Ratio = w.RPS / best["nginx"].RPS
			b.res.Serve = append(b.res.Serve, w)
		}
	}
	return nil
}

func writeServeFile(path, ext string, size int64) error {
	if ext == "pdf" {
		return writeBigPDF(path, size)
	}
	var buf bytes.Buffer
	buf.WriteString("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Benchmark report</title></head><body>\n")
	for i := 0; int64(buf.Len()) < size-64; i++ {
		fmt.Fprintf(&buf, "<p>Row %d of the benchmark report: quarterly figures, notes and a table.</p>\n", i)
	}
	buf.WriteString("</body></html>\n")
	return os.WriteFile(path, buf.Bytes()[:min(int64(buf.Len()), size)], 0o644)
}

type nginx struct {
	cmd  *exec.Cmd
	base string
}

// nginxConf is Debian's stock http settings (sendfile, tcp_nopush, an
// access log) with the data directory as root.
var nginxConf = template.Must(template.New("nginx").Parse(`daemon off;
master_process on;
worker_processes auto;
user root;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log warn;
events { worker_connections 1024; }
http {
    sendfile on;
    tcp_nopush on;
    types { application/pdf pdf; text/html html; text/css css; text/javascript js; application/json json; image/png png; image/svg+xml svg; }
    default_type application/octet-stream;
    access_log {{.Dir}}/access.log;
    client_body_temp_path {{.Dir}}/body;
    proxy_temp_path {{.Dir}}/proxy;
    fastcgi_temp_path {{.Dir}}/fastcgi;
    uwsgi_temp_path {{.Dir}}/uwsgi;
    scgi_temp_path {{.Dir}}/scgi;
    server {
        listen {{.Addr}};
        root {{.Root}};
        location {{.Location}} { }
    }
}
`))

func (b *bench) startNginx(ctx context.Context) (*nginx, error) {
	return b.startNginxAt(ctx, b.dataDir, "/uploads/")
}

// startNginxAt serves root's files below location (nginx's root
// directive: a URL path maps to root + path).
func (b *bench) startNginxAt(ctx context.Context, root, location string) (*nginx, error) {
	dir := filepath.Join(b.work, "nginx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var conf bytes.Buffer
	if err := nginxConf.Execute(&conf, map[string]string{"Dir": dir, "Addr": addr, "Root": root, "Location": location}); err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return runNginx(ctx, dir, confPath, addr)
}

// runNginx starts nginx with prefix dir on confPath and waits until it
// listens on addr.
func runNginx(ctx context.Context, dir, confPath, addr string) (*nginx, error) {
	cmd := exec.Command(nginxBin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ng := &nginx{cmd: cmd, base: "http://" + addr}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return ng, nil
		}
		if err := ctx.Err(); err != nil {
			break
		}
	}
	ng.stop()
	return nil, fmt.Errorf("nginx did not listen on %s: %s", addr, stderr.String())
}

// stop asks nginx's master to quit (SIGQUIT: finish and exit) and waits.
func (n *nginx) stop() {
	n.cmd.Process.Signal(syscall.SIGQUIT)
	done := make(chan struct{})
	go func() { n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		n.cmd.Process.Kill()
		<-done
	}
}

type wrkResult struct {
	File, Server string
	Size         int64
	RPS          float64
	P50, P99     string
	Ratio        float64
}

var (
	reRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reP50     = regexp.MustCompile(`\n\s+50%\s+(\S+)`)
	reP99     = regexp.MustCompile(`\n\s+99%\s+(\S+)`)
	reNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	reSockErr = regexp.MustCompile(`Socket errors: .*`)
)

func runWrk(ctx context.Context, url string, d time.Duration, headers ...string) (wrkResult, error) {
	secs := strconv.Itoa(max(1, int(d.Seconds())))
	args := []string{"-t", strconv.Itoa(wrkThreads), "-c", strconv.Itoa(wrkConns), "-d", secs + "s", "--timeout", "10s", "--latency"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	out, err := exec.CommandContext(ctx, wrkBin, append(args, url)...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %v: %s", err, out)
	}
	s := string(out)
	if m := reNon2xx.FindStringSubmatch(s); m != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %s non-2xx answers", url, m[1])
	}
	if m := reSockErr.FindString(s); m != "" {
		return wrkResult{}, fmt.Errorf("wrk %s: %s", url, strings.TrimSpace(m))
	}
	m := reRPS.FindStringSubmatch(s)
	if m == nil {
		return wrkResult{}, fmt.Errorf("wrk: no Requests/sec in:\n%s", s)
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	r := wrkResult{RPS: rps}
	if m := reP50.FindStringSubmatch(s); m != nil {
		r.P50 = m[1]
	}
	if m := reP99.FindStringSubmatch(s); m != nil {
		r.P99 = m[1]
	}
	return r, nil
}
