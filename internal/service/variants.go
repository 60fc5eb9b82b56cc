package service

import (
	"context"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/site"
)

// Precompressed variants of site files (site.MakeVariants) are made in
// the background, off the publish path: CommitSite queues the new site
// once its row is committed, and the content origin queues a file it was
// asked for without variants yet (after a restart, or when the queue was
// full). One worker, a bounded queue; work that does not fit is dropped,
// as the next request for the file queues it again. The worker waits while
// a site is being ingested, so publishing keeps the machine's cores.

// variantQueue bounds the queued jobs (sites or single files).
const variantQueue = 256

type variantJob struct {
	manifest string // a site's manifest key: every file it wants, or
	sha      string // one content object
}

type variants struct {
	s      *Service
	once   sync.Once
	closed sync.Once
	jobs   chan variantJob
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	queued map[string]bool // single files queued, so requests queue each once
	active int             // running ingests (the worker yields to them)
}

func (v *variants) start() {
	v.once.Do(func() {
		v.jobs = make(chan variantJob, variantQueue)
		v.stop = make(chan struct{})
		v.done = make(chan struct{})
		v.queued = map[string]bool{}
		go v.run()
	})
}

// close stops the worker (after the file it is compressing) and waits.
func (v *variants) close() {
	v.once.Do(func() {}) // never start after close
	if v.stop == nil {
		return
	}
	v.closed.Do(func() { close(v.stop) })
	<-v.done
}

// ingest marks an ingest running until the returned func is called.
func (v *variants) ingest() func() {
	v.mu.Lock()
	v.active++
	v.mu.Unlock()
	return func() {
		v.mu.Lock()
		v.active--
		v.mu.Unlock()
	}
}

// enqueue queues j unless the queue is full (dropped) or stopped.
func (v *variants) enqueue(j variantJob) {
	v.start()
	if v.stop == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if j.sha != "" {
		if v.queued[j.sha] || len(v.queued) >= variantQueue {
			return
		}
	}
	select {
	case v.jobs <- j:
		if j.sha != "" {
			v.queued[j.sha] = true
		}
	default: // full: made later, on request
	}
}

func (v *variants) run() {
	defer close(v.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-v.stop:
			cancel()
		case <-v.done:
		}
	}()
	for {
		select {
		case <-v.stop:
			return
		case j := <-v.jobs:
			if j.manifest != "" {
				v.site(ctx, j.manifest)
				continue
			}
			v.make(ctx, j.sha)
			v.mu.Lock()
			delete(v.queued, j.sha)
			v.mu.Unlock()
		}
	}
}

// site makes the variants of every file of the manifest at key that
// wants them.
func (v *variants) site(ctx context.Context, key string) {
	m, err := site.Load(ctx, v.s.blobs, key)
	if err != nil {
		return // deleted meanwhile, or unreadable: made on request
	}
	seen := map[string]bool{}
	var shas []string
	for _, f := range m.Files {
		if site.Wants(f) && !seen[f.SHA256] {
			seen[f.SHA256] = true
			shas = append(shas, f.SHA256)
		}
	}
	// In chunks: each is flushed to disk once (site.MakeVariantsOf), and
	// a crash or a stop loses at most one chunk's work.
	for len(shas) > 0 && ctx.Err() == nil {
		n := min(len(shas), variantChunk)
		before := func() error { return v.waitIngests(ctx) }
		if err := site.MakeVariantsOf(ctx, v.s.blobs, shas[:n], v.s.tempDir(), before); err != nil && ctx.Err() == nil {
			v.s.log.Warn("site: cannot make precompressed variants", "manifest", key, "err", err)
			return
		}
		shas = shas[n:]
	}
}

// variantChunk is how many files' variants are made between two flushes.
const variantChunk = 256

// make compresses one object, after waiting for running ingests.
func (v *variants) make(ctx context.Context, sha string) {
	if v.waitIngests(ctx) != nil {
		return
	}
	if _, err := site.MakeVariants(ctx, v.s.blobs, sha, v.s.tempDir()); err != nil && ctx.Err() == nil {
		v.s.log.Warn("site: cannot make precompressed variants", "sha256", sha, "err", err)
	}
}

// waitIngests returns once no ingest runs (the worker yields the cores to
// publishing), or with ctx's error.
func (v *variants) waitIngests(ctx context.Context) error {
	for {
		v.mu.Lock()
		busy := v.active > 0
		v.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// SiteVariants tells which precompressed variants of f (a file of report
// id's manifest) exist; when f wants variants (site.Wants) and they are
// not made yet, it queues them.
func (s *Service) SiteVariants(ctx context.Context, id int64, f site.File) (site.Variants, error) {
	v, err := site.LookupVariants(ctx, s.blobs, f.SHA256)
	if err != nil {
		return v, err
	}
	if !v.Done && site.Wants(f) {
		s.variants.enqueue(variantJob{sha: f.SHA256})
	}
	return v, nil
}
