package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/bufpool"
	"github.com/reportd/reportd/internal/report"
)

// smallFile is the largest file hashed in memory before it is stored.
const smallFile = 256 << 10

// smallBufs hold the small files between the scan and the workers, by
// power-of-two size up to smallFile.
var smallBufs = bufpool.New(12, 18)

// Tuning of the putter: objects are written by putWorkers goroutines
// (S3: parallel uploads), or batchWorkers() into a blob.Batch, whose
// writes are not synced one by one, with at most maxInFlight bytes of
// small files waiting in memory.
const (
	putWorkers  = 8
	maxInFlight = 16 << 20
)

// batchWorkers is one worker per core (2 to 8): a batch's writes are the
// kernel's work (creating and filling files), so more workers than cores
// only contend. On 2 cores, publishing a changed 10,011-file site took a
// median ~600-650 ms with 2 workers against ~710 with 4 and ~720 with 1
// (BENCHMARKS.md, 2026-11-29, session 9); with staging folders, 8 made the
// kernel spin on their locks.
func batchWorkers() int { return min(max(runtime.GOMAXPROCS(0), 2), 8) }

// putter stores files content-addressed. The scan hashes each file as it
// reads it (in memory up to smallFile, else staged in tempDir) and hands
// the write to a pool of workers: through one blob.Batch where the store
// offers it (made durable together at finish), else by parallel Puts.
type putter struct {
	ctx     context.Context
	cancel  context.CancelFunc
	store   blob.Store
	batch   blob.Batch // nil: Puts
	tempDir string
	buf     []byte
	jobs    chan putJob
	wg      sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	budget  int64    // bytes of small files that may still be queued
	err     error    // the first worker error
	assumed []string // keys found stored already, not staged (batch)

	// small files seen, lookups before writing them, and their hits
	// (lookFirst; halved as they go)
	seen, looked, found int64
}

type putJob struct {
	key  string
	data []byte // small file, or
	tmp  string // staged large file
	size int64
	ct   string
}

func newPutter(ctx context.Context, store blob.Store, tempDir string) *putter {
	p := &putter{store: store, tempDir: tempDir, buf: make([]byte, smallFile+1),
		jobs: make(chan putJob, putWorkers), budget: maxInFlight}
	p.cond = sync.NewCond(&p.mu)
	if b, ok := store.(blob.Batcher); ok {
		p.batch = b.NewBatch()
	}
	p.ctx, p.cancel = context.WithCancel(ctx)
	n := putWorkers
	if p.batch != nil {
		n = batchWorkers()
	}
	for range n {
		p.wg.Go(p.work)
	}
	return p
}

// fail records a worker's error and stops the scan.
func (p *putter) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.cancel()
	p.cond.Broadcast()
}

func (p *putter) firstErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// wait closes the queue and waits for the workers: it returns scanErr
// (the scan's error), unless a worker's error stopped the scan.
func (p *putter) wait(scanErr error) error {
	close(p.jobs)
	if scanErr != nil {
		p.cancel()
		p.cond.Broadcast()
	}
	p.wg.Wait()
	err := p.firstErr()
	if err == nil {
		err = scanErr
	} else if scanErr != nil && !errors.Is(scanErr, context.Canceled) {
		err = scanErr
	}
	if err == nil {
		err = p.ctx.Err() // cancelled: workers dropped their jobs
	}
	return err
}

func (p *putter) work() {
	for j := range p.jobs {
		if p.ctx.Err() != nil {
			p.drop(j)
			continue
		}
		if err := p.store1(j); err != nil {
			p.fail(err)
		}
		p.drop(j)
	}
}

// drop releases what a job holds: its budget or its temp file.
func (p *putter) drop(j putJob) {
	if j.data != nil {
		p.mu.Lock()
		p.budget += int64(cap(j.data))
		p.mu.Unlock()
		p.cond.Broadcast()
		smallBufs.Put(j.data) // written (or dropped): nothing reads it any more
	}
	if j.tmp != "" {
		os.Remove(j.tmp) // gone already if the store adopted it
	}
}

// store1 writes one object (unless it is there already).
func (p *putter) store1(j putJob) error {
	ctx := p.ctx
	// Asking first is cheaper than writing: S3, a HEAD instead of an
	// upload; the local store, a stat instead of a file created, written,
	// flushed and removed at the commit (a batch leaves existing keys
	// alone). Sites repeat most of their files from one build to the next.
	// In a batch, the object is assumed to stay until the commit:
	// Staged.Finish checks that when the staging was not under the site
	// lock that keeps GC away.
	// When few of the upload's recent lookups found the file stored, a
	// batch skips most lookups of small files (lookFirst).
	if p.lookFirst(j.data != nil) {
		if _, err := p.stat(ctx, j.key); err == nil {
			p.mu.Lock()
			p.found++
			if p.batch != nil {
				p.assumed = append(p.assumed, j.key)
			}
			p.mu.Unlock()
			return nil
		} else if !errors.Is(err, blob.ErrNotFound) {
			return err
		}
	}
	opt := blob.PutOptions{IfNoneMatch: true, Size: j.size, ContentType: j.ct, SHA256: path.Base(j.key)}
	var err error
	switch {
	case p.batch != nil && j.data != nil:
		err = p.batch.Put(ctx, j.key, bytes.NewReader(j.data), opt)
	case p.batch != nil:
		err = p.batch.Adopt(ctx, j.key, j.tmp, opt)
	case j.data != nil:
		_, err = p.store.Put(ctx, j.key, bytes.NewReader(j.data), opt)
	default:
		_, err = blob.PutFile(ctx, p.store, j.key, j.tmp, opt)
	}
	if errors.Is(err, blob.ErrExists) && p.batch != nil {
		// A batch that writes objects in place found it there: stored,
		// as if the lookup had found it.
		p.mu.Lock()
		p.assumed = append(p.assumed, j.key)
		p.mu.Unlock()
		return nil
	}
	if err != nil && !errors.Is(err, blob.ErrExists) {
		return err
	}
	return nil
}

// stat asks the batch (which knows what other batches are still writing)
// or the store whether key is stored.
func (p *putter) stat(ctx context.Context, key string) (blob.Info, error) {
	if s, ok := p.batch.(blob.BatchStater); ok {
		return s.Stat(ctx, key)
	}
	return p.store.Stat(ctx, key)
}

// Asking the store first pays when a site repeats files of an earlier one.
// A batch tells new from stored at its commit anyway (a link to a key that
// exists keeps the object there), so once lookWindow lookups found fewer
// than one in lookHitRatio stored (a build whose every page changed, as
// coverage.py's with its time stamp), a batch asks for one small file in
// lookHitRatio only, and for all of them again when those find enough.
// The counts are halved each time lookWindow more lookups were made, so
// the recent ones decide: however long a run of new files, lookups resume
// within a few hundred files once stored ones come.
const (
	lookWindow   = 256
	lookHitRatio = 16
)

// lookFirst reports whether the next file's key is looked up before it is
// written (see lookWindow). Large files (staged in a temp file) are
// always looked up: a stat is nothing beside moving and flushing them.
func (p *putter) lookFirst(small bool) bool {
	if p.batch == nil || !small {
		return true // S3: a HEAD is far cheaper than an upload
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen++
	if p.looked < lookWindow || p.found*lookHitRatio >= p.looked || p.seen%lookHitRatio == 0 {
		p.looked++
		if p.looked >= 2*lookWindow {
			p.looked, p.found = p.looked/2, p.found/2
		}
		return true
	}
	return false
}

// reserve waits until n more bytes may be queued.
func (p *putter) reserve(n int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.budget < n && p.err == nil && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	if p.err != nil {
		return p.err
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	p.budget -= n
	return nil
}

// put reads one file, hashes it and queues its write.
func (p *putter) put(name string, r io.Reader) (File, error) {
	if err := p.firstErr(); err != nil {
		return File{}, err
	}
	n, err := readUpTo(r, p.buf)
	if err != nil {
		return File{}, err
	}
	ct := ContentType(name)
	if n <= smallFile {
		f := File{SHA256: sum(p.buf[:n])}
		data := smallBufs.Get(max(n, 1))[:n] // never nil: data marks a small file
		copy(data, p.buf[:n])
		if err := p.reserve(int64(cap(data))); err != nil {
			smallBufs.Put(data)
			return File{}, err
		}
		return f, p.queue(putJob{key: ObjectKey(f.SHA256), data: data, size: int64(n), ct: ct})
	}
	tf, err := os.CreateTemp(p.tempDir, "site-*")
	if err != nil {
		return File{}, blob.StorageErr(err, "cannot store the site")
	}
	tmp := tf.Name()
	fail := func(err error) (File, error) {
		tf.Close()
		os.Remove(tmp)
		return File{}, err
	}
	h := sha256.New()
	w := io.MultiWriter(tf, h)
	if _, err := w.Write(p.buf[:n]); err != nil {
		return fail(blob.StorageErr(err, "cannot store the site"))
	}
	src := &readErr{r: r}
	size, err := io.Copy(w, src)
	if err != nil {
		var re *report.Error
		if src.err != nil || errors.As(err, &re) || p.ctx.Err() != nil {
			return fail(err) // the archive's fault (the walk says where), or a refusal
		}
		return fail(blob.StorageErr(err, "cannot store the site"))
	}
	if err := tf.Close(); err != nil {
		os.Remove(tmp)
		return File{}, blob.StorageErr(err, "cannot store the site")
	}
	size += int64(n)
	f := File{SHA256: hex.EncodeToString(h.Sum(nil))}
	return f, p.queue(putJob{key: ObjectKey(f.SHA256), tmp: tmp, size: size, ct: ct})
}

// queue hands a job to the workers (or drops it if they stopped).
func (p *putter) queue(j putJob) error {
	select {
	case p.jobs <- j:
		return nil
	case <-p.ctx.Done():
		p.drop(j)
		if err := p.firstErr(); err != nil {
			return err
		}
		return p.ctx.Err()
	}
}

// readUpTo fills buf unless r ends first; unlike io.ReadFull, an
// io.ErrUnexpectedEOF from r (a truncated archive) stays an error.
func readUpTo(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// readErr remembers its reader's error, telling a damaged archive from a
// failing disk when a copy fails.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

// stillThere checks that every object the staging assumed stored is still
// there (ErrGone if not), a few stats at a time.
func (p *putter) stillThere(ctx context.Context) error {
	keys := p.assumed
	var gone atomic.Bool
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	n := min(putWorkers, len(keys))
	for w := range n {
		wg.Go(func() {
			for i := w; i < len(keys) && !gone.Load(); i += n {
				if _, err := p.stat(ctx, keys[i]); err != nil {
					if errors.Is(err, blob.ErrNotFound) {
						err = ErrGone
					}
					once.Do(func() { first = err })
					gone.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return first
}
