package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// siteRounds publishes the site this many times (each on a clean store:
// the previous report is deleted and its objects collected), alternating
// with tar x of the same archive; the best of each is kept.
const siteRounds = 2

type sitesResult struct {
	Files        int
	TreeBytes    int64
	ArchiveBytes int64
	Rounds       []siteRound
	Serve        []wrkResult
	Dedup        *dedupResult
}

type siteRound struct {
	TarX, TarXSync, Publish time.Duration
	RSSBase, RSSGrowth      int64
	Stored                  int64 // bytes below the data dir after the upload
}

// sites measures report sites end to end: a coverage.py site generated
// by coverage.py itself (SiteModules modules, one page each), published as
// a .tar.gz through POST /api/reports next to tar x of the same archive on
// the same disk, the daemon's RSS meanwhile, and its small pages and
// stylesheet served by the content origin next to nginx serving the
// unpacked tree.
func (b *bench) sites(ctx context.Context, skipDedup bool) error {
	work := filepath.Join(b.work, "sites")
	gen := filepath.Join(work, "gen")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		return err
	}
	logf("generating a coverage.py site of %d modules", b.sz.SiteModules)
	t0 := time.Now()
	tree, err := coverageSite(ctx, gen, b.sz.SiteModules)
	if err != nil {
		return err
	}
	archive := filepath.Join(work, "htmlcov.tar.gz")
	if out, err := exec.CommandContext(ctx, "tar", "czf", archive, "-C", gen, "htmlcov").CombinedOutput(); err != nil {
		return fmt.Errorf("tar czf: %v: %s", err, out)
	}
	res := sitesResult{}
	res.Files, res.TreeBytes, err = treeSize(tree)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(archive); err == nil {
		res.ArchiveBytes = fi.Size()
	}
	logf("site: %d files, %d MiB, archive %d MiB (generated in %v)", res.Files, res.TreeBytes>>20, res.ArchiveBytes>>20, time.Since(t0).Round(time.Second))

	cport, err := freePort()
	if err != nil {
		return err
	}
	contentAddr := "127.0.0.1:" + strconv.Itoa(cport)
	sb := &bench{bin: b.bin, ctl: b.ctl, work: work, dataDir: filepath.Join(work, "data"), sz: b.sz, client: b.client,
		env: []string{"REPORTD_CONTENT_ADDR=" + contentAddr, "REPORTD_CONTENT_URL=http://{id}.reports-content.example.com",
			"REPORTD_SITES_GC_GRACE=0s"}}
	if _, err := sb.startDaemon(ctx); err != nil {
		return err
	}
	defer sb.stopDaemon()
	project, err := sb.createProject(ctx, "sites")
	if err != nil {
		return err
	}
	var id int64
	for round := range siteRounds {
		if round > 0 {
			if err := sb.delete(ctx, "/api/reports/"+strconv.FormatInt(id, 10)); err != nil {
				return err
			}
		}
		// The daemon precompresses a published site in the background:
		// let it finish, so neither tar x nor the next publish competes with it.
		if _, err := settled(filepath.Join(sb.dataDir, "uploads")); err != nil {
			return err
		}
		var r siteRound
		if r.TarX, r.TarXSync, err = tarX(ctx, archive, filepath.Join(work, "untar")); err != nil {
			return err
		}
		r.Publish, r.RSSGrowth, r.RSSBase, err = sb.sampleRSS(func() (err error) {
			id, err = sb.uploadFile(ctx, archive, project, "html")
			return err
		})
		if err != nil {
			return err
		}
		if _, r.Stored, err = treeSize(sb.dataDir); err != nil {
			return err
		}
		logf("site round %d: tar x %v (+sync %v), publish %v, RSS %d MiB + %.1f MiB, data dir %d MiB", round+1,
			r.TarX.Round(time.Millisecond), r.TarXSync.Round(time.Millisecond), r.Publish.Round(time.Millisecond),
			r.RSSBase>>20, float64(r.RSSGrowth)/(1<<20), r.Stored>>20)
		res.Rounds = append(res.Rounds, r)
	}
	// The last round's precompression too: serving is measured without it.
	if _, err := settled(filepath.Join(sb.dataDir, "uploads")); err != nil {
		return err
	}
	if res.Serve, err = sb.serveSite(ctx, tree, id, contentAddr); err != nil {
		return err
	}
	if b.ctl != "" {
		// The store holds the last round's site: reportctl publishes next to it.
		if b.res.CLI, err = sb.publishCLI(ctx, b.ctl, tree, archive, project); err != nil {
			return fmt.Errorf("reportctl upload DIR: %w", err)
		}
	}
	if !skipDedup {
		dp, err := sb.createProject(ctx, "playwright")
		if err != nil {
			return err
		}
		if res.Dedup, err = sb.dedup(ctx, dp); err != nil {
			return err
		}
	}
	b.res.Sites = &res
	return nil
}

// coverageSite runs coverage.py over n generated modules (a branch each,
// half of them taken) and writes its HTML report; it returns the folder.
func coverageSite(ctx context.Context, dir string, n int) (string, error) {
	pkg := filepath.Join(dir, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(pkg, "__init__.py"), nil, 0o644); err != nil {
		return "", err
	}
	for i := range n {
		src := fmt.Sprintf("def f(x):\n    if x > %d:\n        return x * 2\n    return -x\n\n\ndef g(y):\n    return y + %d\n", i%7, i)
		if err := os.WriteFile(filepath.Join(pkg, fmt.Sprintf("m%05d.py", i)), []byte(src), 0o644); err != nil {
			return "", err
		}
	}
	drive := fmt.Sprintf("import importlib\nfor i in range(%d):\n    importlib.import_module('pkg.m%%05d' %% i).f(i %% 10)\n", n)
	if err := os.WriteFile(filepath.Join(dir, "drive.py"), []byte(drive), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"run", "drive.py"}, {"html", "-q", "-d", "htmlcov"}} {
		cmd := exec.CommandContext(ctx, "python3-coverage", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("python3-coverage %s: %v: %s", args[0], err, out)
		}
	}
	return filepath.Join(dir, "htmlcov"), nil
}

// tarX unpacks archive into a fresh dir and times it, then the syncfs(2)
// that makes it durable (which the daemon does before it answers).
func tarX(ctx context.Context, archive, dst string) (x, xSync time.Duration, err error) {
	if err := os.RemoveAll(dst); err != nil {
		return 0, 0, err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, 0, err
	}
	exec.CommandContext(ctx, "sync").Run()
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, "tar", "xzf", archive, "-C", dst).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("tar x: %v: %s", err, out)
	}
	x = time.Since(t0)
	if out, err := exec.CommandContext(ctx, "sync", "-f", dst).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("sync -f: %v: %s", err, out)
	}
	return x, time.Since(t0), os.RemoveAll(dst)
}

func treeSize(dir string) (files int, size int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p != dir {
			return nil // removed by the daemon meanwhile (a batch's staging folder)
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		files++
		size += fi.Size()
		return nil
	})
	return files, size, err
}

func (b *bench) createProject(ctx context.Context, name string) (int64, error) {
	body, _ := json.Marshal(map[string]string{"name": name})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/projects", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return createdID(resp)
}

// serveSite puts the site's stylesheet and a module page under wrk, from
// the content origin (the report's own origin, by Host), from a bare
// net/http handler serving the same bytes from memory, from the shipped
// nginx.conf's cache in front of the content origin, and from nginx
// serving the unpacked tree, alternating rounds; the best of each is kept.
func (b *bench) serveSite(ctx context.Context, tree string, id int64, contentAddr string) ([]wrkResult, error) {
	page, err := firstModulePage(tree)
	if err != nil {
		return nil, err
	}
	ng, err := b.startNginxAt(ctx, tree, "/")
	if err != nil {
		return nil, err
	}
	defer ng.stop()
	front, stopFront, err := b.startFront(ctx, contentAddr)
	if err != nil {
		return nil, err
	}
	defer stopFront()
	names := []string{"style.css", page}
	mem := map[string][]byte{}
	for _, name := range names {
		if mem["/"+name], err = os.ReadFile(filepath.Join(tree, name)); err != nil {
			return nil, err
		}
	}
	bare, stopBare, err := bareHTTP(mem, nil)
	if err != nil {
		return nil, err
	}
	defer stopBare()
	hdrs := map[string]http.Header{}
	for path, b := range mem {
		if hdrs[path], err = originHeaders(contentAddr, frontHost(id), path, b); err != nil {
			return nil, err
		}
	}
	bareHdr, stopBareHdr, err := bareHTTP(mem, hdrs)
	if err != nil {
		return nil, err
	}
	defer stopBareHdr()
	for path, b := range mem {
		if err := checkFront(front, frontHost(id), path, b); err != nil {
			return nil, err
		}
	}
	host := "Host: " + frontHost(id)
	var out []wrkResult
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(tree, name))
		if err != nil {
			return nil, err
		}
		label := fmt.Sprintf("%s (%.1f KiB)", name, float64(fi.Size())/1024)
		runs := []struct{ server, url, header string }{
			{"nginx", ng.base + "/" + name, ""},
			{serverBare, bare + "/" + name, ""},
			{serverBareHdr, bareHdr + "/" + name, ""},
			{serverOrigin, "http://" + contentAddr + "/" + name, host},
			{serverFront, front + "/" + name, host},
		}
		best := map[string]wrkResult{}
		for round := -1; round < serveRounds; round++ {
			for _, r := range runs {
				d := b.sz.WrkFor
				if round < 0 {
					d = time.Second // warm-up, not kept
				}
				w, err := runWrk(ctx, r.url, d, nonEmpty(r.header)...)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", r.server, name, err)
				}
				if round < 0 {
					continue
				}
				logf("%-24s %-24s round %d: %9.0f req/s  p50 %-8s p99 %s", label, r.server, round+1, w.RPS, w.P50, w.P99)
				if w.RPS > best[r.server].RPS {
					best[r.server] = w
				}
			}
		}
		for _, r := range runs {
			w := best[r.server]
			w.File, w.Server, w.Size = label, r.server, fi.Size()
			w.Ratio = w.RPS / best["nginx"].RPS
			out = append(out, w)
		}
	}
	return out, nil
}

// The servers of serveSite's rows besides nginx.
const (
	serverBare = "bare net/http (bytes in memory)"
	// serverBareHdr is the same handler sending the content origin's
	// header set (not a target: what those headers cost net/http).
	serverBareHdr = "bare net/http, origin's headers"
	serverOrigin  = "reportd content origin"
	serverFront   = "nginx cache -> content origin"
)

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// firstModulePage is the first per-module page of a coverage.py site
// (z_<hash>_m00000_py.html in coverage 7, m00000_py.html before).
func firstModulePage(tree string) (string, error) {
	names, err := filepath.Glob(filepath.Join(tree, "*_py.html"))
	if err != nil || len(names) == 0 {
		return "", fmt.Errorf("no module page in %s", tree)
	}
	sort.Strings(names)
	return filepath.Base(names[0]), nil
}

func (r *results) sitesTable(b *strings.Builder, sz sizes, verdict func(bool, string, ...any)) {
	s := r.Sites
	if s == nil || len(s.Rounds) == 0 {
		return
	}
	fmt.Fprintf(b, "### Report sites (coverage.py)\n\nA coverage.py HTML report of %s modules made by coverage.py itself: %s files, %.1f MiB, %.1f MiB as .tar.gz. "+
		"Each round unpacks the archive with `tar xzf` into a fresh folder on the same disk as the data dir (then `sync -f`), and publishes it with "+
		"POST /api/reports (fileType html) on a clean store, timed to the 201; RSS is the daemon's, sampled every 10 ms.\n\n",
		thousands(sz.SiteModules), thousands(s.Files), float64(s.TreeBytes)/(1<<20), float64(s.ArchiveBytes)/(1<<20))
	b.WriteString("| Round | tar x | tar x + sync | publish | publish / tar x | RSS before | RSS growth | data dir after |\n|---|---|---|---|---|---|---|---|\n")
	var bestX, bestPub time.Duration
	var maxGrowth int64
	for i, rd := range s.Rounds {
		fmt.Fprintf(b, "| %d | %s ms | %s ms | %s ms | %.2fx | %d MiB | %.1f MiB | %.1f MiB |\n", i+1, ms(rd.TarX), ms(rd.TarXSync), ms(rd.Publish),
			float64(rd.Publish)/float64(rd.TarX), rd.RSSBase>>20, float64(rd.RSSGrowth)/(1<<20), float64(rd.Stored)/(1<<20))
		bestX, bestPub = minNZ(bestX, rd.TarX), minNZ(bestPub, rd.Publish)
		maxGrowth = max(maxGrowth, rd.RSSGrowth)
	}
	b.WriteString("\n")
	verdict(float64(bestPub) <= 2*float64(bestX), "publishing a %s-file coverage.py site <= 2x tar x (best %s ms vs %s ms: %.2fx)",
		thousands(s.Files), ms(bestPub), ms(bestX), float64(bestPub)/float64(bestX))
	verdict(maxGrowth < 64<<20, "daemon RSS growth while publishing it < 64 MiB (%.1f MiB)", float64(maxGrowth)/(1<<20))
	if len(s.Serve) == 0 {
		return
	}
	fmt.Fprintf(b, "Small files of that site from the content origin (the report's own origin, chosen by Host), from a bare net/http handler serving the same bytes "+
		"from memory (Content-Type and Content-Length only; the second bare row sends the content origin's own header set, Date aside), and through the shipped examples/content-origin/nginx.conf (its proxy_cache, plain HTTP on loopback) in front of the content origin, "+
		"next to nginx serving the unpacked tree, "+
		"`wrk -t%d -c%d --latency`, %v per run, %d alternating rounds after a 1 s warm-up, best of each:\n\n", wrkThreads, wrkConns, sz.WrkFor, serveRounds)
	b.WriteString("| File | Server | Requests/s | p50 | p99 | vs nginx |\n|---|---|---|---|---|---|\n")
	for _, w := range s.Serve {
		fmt.Fprintf(b, "| %s | %s | %.0f | %s | %s | %.2fx |\n", w.File, w.Server, w.RPS, w.P50, w.P99, w.Ratio)
	}
	b.WriteString("\n")
	bare := map[string]float64{}
	for _, w := range s.Serve {
		if w.Server == serverBare {
			bare[w.File] = w.RPS
		}
	}
	for _, w := range s.Serve {
		switch w.Server {
		case serverOrigin:
			if bare[w.File] > 0 {
				verdict(w.RPS >= 0.9*bare[w.File], "%s from the content origin >= 0.9x a bare net/http handler serving it from memory (%.2fx; %.2fx nginx)",
					w.File, w.RPS/bare[w.File], w.Ratio)
			}
		case serverFront:
			verdict(w.Ratio >= 0.8, "%s through the shipped nginx.conf's cache >= 0.8x nginx serving it statically (%.2fx)", w.File, w.Ratio)
		}
	}
}
