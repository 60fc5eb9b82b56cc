package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
	"github.com/reportd/reportd/internal/testbin"
)

type throughput struct {
	Replicas  int
	Uploaders int
	Reports   int64
	Took      time.Duration
	P50, P95  time.Duration
}

type bigResult struct {
	Bytes             int64
	Took              time.Duration
	HWMBefore, HWMAft int64
	RSSBefore         int64
}

// uploads runs the storage: postgres+s3 phases: small uploads against one
// replica, then two (one database, one bucket), then the streamed 1 GiB
// upload through one replica.
func (b *bench) uploads(ctx context.Context) error {
	dsn, err := b.pg.CreateDatabase(ctx)
	if err != nil {
		return err
	}
	env, err := b.s3Env(ctx, dsn)
	if err != nil {
		return err
	}
	env = append(env, "REPORTD_MAX_UPLOAD_BYTES=2GiB")
	a, err := b.start(filepath.Join(b.work, "replica-a"), env...)
	if err != nil {
		return err
	}
	project, err := b.createProject(a.URL())
	if err != nil {
		return err
	}
	t, err := b.throughput(ctx, []*testbin.Daemon{a}, project)
	if err != nil {
		return err
	}
	b.res.Uploads = append(b.res.Uploads, t)
	c, err := b.start(filepath.Join(b.work, "replica-b"), env...)
	if err != nil {
		return err
	}
	if t, err = b.throughput(ctx, []*testbin.Daemon{a, c}, project); err != nil {
		return err
	}
	b.res.Uploads = append(b.res.Uploads, t)
	c.Stop()
	big, err := b.bigUpload(ctx, a, project)
	if err != nil {
		return err
	}
	b.res.Big = &big
	return nil
}

func (b *bench) createProject(base string) (int64, error) {
	resp, err := b.client.Post(base+"/api/projects", "application/json", bytes.NewReader([]byte(`{"name":"uploads"}`)))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var p struct{ ID int64 }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("create project: %s %v", resp.Status, err)
	}
	return p.ID, nil
}

// throughput: Uploaders workers, each bound to one replica (round-robin),
// post small Markdown reports for UploadFor; reports/s is what was stored.
func (b *bench) throughput(ctx context.Context, replicas []*testbin.Daemon, project int64) (throughput, error) {
	body := bytes.Repeat([]byte("A line of a small Markdown report for the upload benchmark.\n"), b.sz.UploadSize/60+1)[:b.sz.UploadSize]
	var (
		done    atomic.Int64
		mu      sync.Mutex
		lat     []time.Duration
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(b.sz.UploadFor)
	for w := range b.sz.Uploaders {
		base := replicas[w%len(replicas)].URL()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) && ctx.Err() == nil {
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				mw.WriteField("projectId", strconv.FormatInt(project, 10))
				mw.WriteField("fileType", "md")
				fw, _ := mw.CreateFormFile("file", "small.md")
				fw.Write(body)
				mw.Close()
				t0 := time.Now()
				resp, err := b.client.Post(base+"/api/reports", mw.FormDataContentType(), &buf)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						err = fmt.Errorf("upload: %s", resp.Status)
					}
				}
				if err != nil {
					errOnce.Do(func() { first = err })
					return
				}
				mine = append(mine, time.Since(t0))
				done.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if first != nil {
		return throughput{}, first
	}
	sortDurations(lat)
	t := throughput{Replicas: len(replicas), Uploaders: b.sz.Uploaders, Reports: done.Load(), Took: took, P50: benchkit.Pct(lat, 50), P95: benchkit.Pct(lat, 95)}
	logf("%d replica(s), %d uploaders: %d reports in %v = %.0f reports/s (p50 %v, p95 %v)", t.Replicas, t.Uploaders, t.Reports,
		took.Round(time.Millisecond), float64(t.Reports)/took.Seconds(), t.P50.Round(time.Millisecond), t.P95.Round(time.Millisecond))
	return t, nil
}

// bigUpload streams a BigBytes PDF (generated on the fly: no file on the
// client's side) into one replica and reads the daemon's VmHWM before
// and after.
func (b *bench) bigUpload(ctx context.Context, d *testbin.Daemon, project int64) (bigResult, error) {
	pid := d.Cmd.Process.Pid
	r := bigResult{Bytes: b.sz.BigBytes}
	var err error
	if r.HWMBefore, err = benchkit.ProcStatus(pid, "VmHWM"); err != nil {
		return r, err
	}
	if r.RSSBefore, err = benchkit.ProcStatus(pid, "VmRSS"); err != nil {
		return r, err
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("projectId", strconv.FormatInt(project, 10))
		mw.WriteField("fileType", "pdf")
		fw, err := mw.CreateFormFile("file", "big.pdf")
		if err == nil {
			err = writePDF(fw, b.sz.BigBytes)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	logf("streaming a %d MiB upload into storage: postgres+s3", b.sz.BigBytes>>20)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.URL()+"/api/reports", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	t0 := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return r, err
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.Took = time.Since(t0)
	if resp.StatusCode != http.StatusCreated {
		return r, fmt.Errorf("big upload: %s %s", resp.Status, msg)
	}
	if r.HWMAft, err = benchkit.ProcStatus(pid, "VmHWM"); err != nil {
		return r, err
	}
	logf("%d MiB in %v (%.0f MiB/s); VmHWM %d -> %d MiB (+%d MiB)", r.Bytes>>20, r.Took.Round(time.Millisecond),
		float64(r.Bytes)/(1<<20)/r.Took.Seconds(), r.HWMBefore>>20, r.HWMAft>>20, (r.HWMAft-r.HWMBefore)>>20)
	return r, nil
}

// writePDF writes size bytes: a PDF header, random bytes, an EOF marker.
func writePDF(w io.Writer, size int64) error {
	head, tail := []byte("%PDF-1.4\n"), []byte("\n%%EOF\n")
	if _, err := w.Write(head); err != nil {
		return err
	}
	block := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{7})
	for left := size - int64(len(head)+len(tail)); left > 0; left -= int64(len(block)) {
		rng.Read(block)
		if _, err := w.Write(block[:min(int64(len(block)), left)]); err != nil {
			return err
		}
	}
	_, err := w.Write(tail)
	return err
}
