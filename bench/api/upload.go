package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// bigUploadRounds alternates cp and upload, keeping the best of each, so a
// burst from a neighbour on a shared machine does not decide the ratio.
const bigUploadRounds = 3

// bigUpload times one large PDF upload against cp of the same file, and
// samples the daemon's RSS while the upload streams.
func (b *bench) bigUpload(ctx context.Context) error {
	src := filepath.Join(b.work, "big.pdf")
	logf("writing a %d MiB file", b.sz.UploadBytes>>20)
	if err := writeBigPDF(src, b.sz.UploadBytes); err != nil {
		return err
	}
	defer os.Remove(src)
	r := bigResult{Bytes: b.sz.UploadBytes}
	for round := range bigUploadRounds {
		dst := filepath.Join(b.work, "big-copy.pdf")
		t0 := time.Now()
		if out, err := exec.CommandContext(ctx, "cp", src, dst).CombinedOutput(); err != nil {
			return fmt.Errorf("cp: %v: %s", err, out)
		}
		cp := time.Since(t0)
		if out, err := exec.CommandContext(ctx, "sync", dst).CombinedOutput(); err != nil {
			return fmt.Errorf("sync: %v: %s", err, out)
		}
		cpSync := time.Since(t0)
		os.Remove(dst)
		// SHA-256 of the bytes is part of every upload (ETag, PDF cache
		// key); Go's crypto/sha256 over the file (what the daemon runs)
		// shows what the hash alone costs on this CPU.
		t0 = time.Now()
		if err := hashFile(src); err != nil {
			return err
		}
		sum := time.Since(t0)

		cpu0, _ := cpuTime(b.cmd.Process.Pid)
		up, growth, base, err := b.uploadSampled(ctx, src)
		if err != nil {
			return err
		}
		cpu1, _ := cpuTime(b.cmd.Process.Pid)
		logf("round %d: cp %v, cp+fsync %v, SHA-256 %v, upload %v (daemon CPU %v), RSS %d MiB + %d MiB", round+1,
			cp.Round(time.Millisecond), cpSync.Round(time.Millisecond), sum.Round(time.Millisecond), up.Round(time.Millisecond), cpu1-cpu0, base>>20, growth>>20)
		r.Rounds = append(r.Rounds, bigRound{CP: cp, CPSync: cpSync, SHA: sum, Upload: up, CPU: cpu1 - cpu0, RSSBase: base, RSSGrowth: growth})
	}
	b.res.Big = &r
	return nil
}

// uploadSampled posts the file and reads /proc/PID/status every 10 ms
// until the answer arrives; it deletes the report afterwards.
func (b *bench) uploadSampled(ctx context.Context, path string) (took time.Duration, growth, base int64, err error) {
	var id int64
	took, growth, base, err = b.sampleRSS(func() (err error) {
		id, err = b.uploadFile(ctx, path, 2, "pdf")
		return err
	})
	if err != nil {
		return 0, 0, 0, err
	}
	if err := b.delete(ctx, "/api/reports/"+strconv.FormatInt(id, 10)); err != nil {
		return 0, 0, 0, err
	}
	return took, growth, base, nil
}

// sampleRSS runs fn while reading the daemon's /proc/PID/status every
// 10 ms, and returns how long fn took and how far the RSS rose above
// where it started.
func (b *bench) sampleRSS(fn func() error) (took time.Duration, growth, base int64, err error) {
	base, err = b.rss()
	if err != nil {
		return 0, 0, 0, err
	}
	var peak atomic.Int64
	peak.Store(base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if v, err := b.rss(); err == nil && v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	})
	t0 := time.Now()
	err = fn()
	took = time.Since(t0)
	close(stop)
	wg.Wait()
	return took, peak.Load() - base, base, err
}

// uploadFile streams a file as POST /api/reports with a known length and
// returns the new report's id. The file's bytes go out with sendfile(2):
// on a 2-core machine the load generator should take as little CPU from
// the daemon as it can (a Go or curl client copying through user space
// costs about a core of its own at these rates).
func (b *bench) uploadFile(ctx context.Context, path string, project int64, fileType string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	head, tail, ctype := multipartFrame(project, fileType, filepath.Base(path))
	addr := strings.TrimPrefix(b.base, "http://")
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Minute))
	req := fmt.Appendf(nil, "POST /api/reports HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		addr, ctype, int64(len(head))+fi.Size()+int64(len(tail)))
	if _, err := conn.Write(append(req, head...)); err != nil {
		return 0, err
	}
	if _, err := conn.(*net.TCPConn).ReadFrom(f); err != nil {
		return 0, err
	}
	if _, err := conn.Write(tail); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return createdID(resp)
}

// multipartFrame is everything of the form but the file's bytes.
func multipartFrame(project int64, fileType, name string) (head, tail []byte, ctype string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("projectId", strconv.FormatInt(project, 10))
	mw.WriteField("fileType", fileType)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream")
	mw.CreatePart(h)
	head = bytes.Clone(buf.Bytes())
	buf.Reset()
	mw.Close()
	return head, bytes.Clone(buf.Bytes()), mw.FormDataContentType()
}

func (b *bench) post(ctx context.Context, body io.Reader, n int64, ctype string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/reports", body)
	if err != nil {
		return 0, err
	}
	req.ContentLength = n
	req.Header.Set("Content-Type", ctype)
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return createdID(resp)
}

func createdID(resp *http.Response) (int64, error) {
	var out struct {
		ID    int64  `json:"id"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("upload answer: %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("upload: %s: %s", resp.Status, out.Error)
	}
	return out.ID, nil
}

func (b *bench) delete(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("DELETE %s: %s", path, resp.Status)
	}
	return nil
}

// writeBigPDF writes a file the daemon accepts as a PDF (header and
// trailer) with incompressible bytes between.
func writeBigPDF(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	head, tail := []byte("%PDF-1.4\n"), []byte("\n%%EOF\n")
	w.Write(head)
	block := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{7})
	for left := size - int64(len(head)+len(tail)); left > 0; left -= int64(len(block)) {
		rng.Read(block)
		w.Write(block[:min(int64(len(block)), left)])
	}
	w.Write(tail)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// smallUploads posts 2 KiB Markdown reports from c workers for SmallFor at
// each concurrency level and counts the reports stored per second.
func (b *bench) smallUploads(ctx context.Context) error {
	file := bytes.Repeat([]byte("A line of a small Markdown report for the upload benchmark.\n"), 34)
	for _, c := range []int{1, 8, 32} {
		var done atomic.Int64
		var firstErr error
		var once sync.Once
		deadline := time.Now().Add(b.sz.SmallFor)
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := range c {
			wg.Go(func() {
				for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
					project := int64(2 + (w*131+i)%(b.sz.Projects-1))
					head, tail, ctype := multipartFrame(project, "md", "small.md")
					body := bytes.Join([][]byte{head, file, tail}, nil)
					if _, err := b.post(ctx, bytes.NewReader(body), int64(len(body)), ctype); err != nil {
						once.Do(func() { firstErr = err })
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		el := time.Since(t0)
		rate := float64(done.Load()) / el.Seconds()
		b.res.Small = append(b.res.Small, smallResult{Concurrency: c, Reports: int(done.Load()), PerSec: rate})
		logf("small uploads at concurrency %2d: %d in %v = %.0f reports/s", c, done.Load(), el.Round(time.Millisecond), rate)
	}
	return nil
}

func hashFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	_, err = io.CopyBuffer(h, f, make([]byte, 1<<20))
	return err
}
