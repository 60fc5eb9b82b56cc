package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
)

// PDFPrefix is where sharedPDFs keeps converted PDFs in the bucket:
// pdf/<sha[:2]>/<sha>/<variant>.pdf (PDFKey). The periodic sweep removes
// those whose content no report has any more.
const PDFPrefix = ops.PDFPrefix

// PDFKey is the bucket key of the PDF of a report's content (its sha256,
// lower-case hex) printed as variant (PDFVariant).
func PDFKey(sha, variant string) string {
	return PDFPrefix + sha[:2] + "/" + sha + "/" + variant + ".pdf"
}

// PDFVariant names a print: the engines' generation (what they print
// today), and for a print with options a hash of them.
func PDFVariant(generation string, opts report.PrintOptions) string {
	if opts.IsZero() {
		return generation
	}
	h := sha256.Sum256([]byte(opts.Key()))
	return generation + "-" + hex.EncodeToString(h[:8])
}

// sharedPDFs keeps converted PDFs in the bucket, keyed by content and
// print, so every replica finds them and a report's copies share one.
// A request looks the PDF up before anything else (a hit fetches no
// original); on a miss one conversion per key runs across replicas:
// singleflight within the process, and a PostgreSQL try-lock across them.
// The lock holder fetches the original, converts it, writes the PDF with
// If-None-Match (a duplicate never overwrites) and removes the copy; the
// others poll the bucket and the lock, backing off, until their request's
// deadline.
type sharedPDFs struct {
	s      *Service
	store  blob.Store
	lock   Locker
	flight singleflight.Group

	ctx    context.Context // ends at Close; conversions run under it
	cancel context.CancelFunc
	bg     sync.WaitGroup
	slots  chan struct{} // bounds background conversions (Prepare)
}

// prepareTimeout bounds one background conversion, waits included.
const prepareTimeout = 10 * time.Minute

func newSharedPDFs(s *Service, store blob.Store, lock Locker) *sharedPDFs {
	c := &sharedPDFs{s: s, store: store, lock: lock, slots: make(chan struct{}, 2)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// errHeldElsewhere: another replica holds the key's lock (converting).
var errHeldElsewhere = errors.New("held by another replica")

func (c *sharedPDFs) PDF(ctx context.Context, rec report.ReportRecord, opts report.PrintOptions) (blob.Object, error) {
	gen := c.s.conv.Generation()
	if (rec.FileType.Info().Engine == report.EnginePassthroughPDF && opts.IsZero()) || gen == "" || !isSHA256(rec.SHA256) {
		// A stored PDF is served as itself (validated), and without
		// engines nothing converts: nothing to share.
		return localPDFs{c.s}.PDF(ctx, rec, opts)
	}
	key := PDFKey(rec.SHA256, PDFVariant(gen, opts))
	wait := 50 * time.Millisecond
	first := true
	for {
		o, err := c.store.Open(ctx, key)
		if err == nil {
			if first {
				c.observe("hit")
			}
			return o, nil
		}
		if !errors.Is(err, blob.ErrNotFound) {
			return nil, blob.StorageErr(err, "cannot read the PDF cache")
		}
		if first {
			c.observe("miss")
			first = false
		}
		ch := c.flight.DoChan(key, func() (any, error) { return c.convert(rec, opts, key) })
		select {
		case r := <-ch:
			if r.Err == nil {
				continue // written (here or by another replica): open it
			}
			if !errors.Is(r.Err, errHeldElsewhere) {
				return nil, r.Err
			}
		case <-ctx.Done():
			return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
		}
		// Another replica converts: look again after a while.
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, report.Wrap(report.Unavailable, ctx.Err(), "timed out waiting for another replica's conversion")
		}
		wait = min(2*wait, time.Second)
	}
}

func (c *sharedPDFs) observe(result string) {
	if c.s.cfg.OnSharedPDF != nil {
		c.s.cfg.OnSharedPDF(result)
	}
}

// convert makes the PDF of key unless another replica is at it
// (errHeldElsewhere) or has made it meanwhile. It runs under the cache's
// context, not a caller's: whoever waits for it shares the result.
// converted says whether this call wrote the PDF.
func (c *sharedPDFs) convert(rec report.ReportRecord, opts report.PrintOptions, key string) (converted bool, err error) {
	unlock, ok, err := c.lock.TryLock(c.ctx, "pdf:"+key)
	if err != nil {
		return false, report.Wrap(report.Storage, err, "cannot take the conversion lock")
	}
	if !ok {
		return false, errHeldElsewhere
	}
	defer unlock()
	// Written between our miss and the lock: done.
	if _, err := c.store.Stat(c.ctx, key); err == nil {
		return false, nil
	} else if !errors.Is(err, blob.ErrNotFound) {
		return false, blob.StorageErr(err, "cannot read the PDF cache")
	}
	f, err := c.s.enginePDF(c.ctx, rec, opts) // the original's copy is gone when it returns
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, report.Wrap(report.Storage, err, "cannot read the PDF")
	}
	_, err = c.store.Put(c.ctx, key, f, blob.PutOptions{IfNoneMatch: true, Size: fi.Size(), ContentType: "application/pdf"})
	if err != nil && !errors.Is(err, blob.ErrExists) {
		return false, blob.StorageErr(err, "cannot write the PDF cache")
	}
	if err == nil {
		c.observe("converted")
	}
	return err == nil, nil
}

// Prepare converts rec's default print into the bucket in the background.
// When background work is at its bound the report is left for the first
// request.
func (c *sharedPDFs) Prepare(rec report.ReportRecord) {
	if rec.FileType.Info().Engine == report.EnginePassthroughPDF || c.ctx.Err() != nil {
		return
	}
	select {
	case c.slots <- struct{}{}:
	default:
		c.s.log.Debug("background conversion skipped: busy", "report", rec.ID)
		return
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		defer func() { <-c.slots }()
		ctx, cancel := context.WithTimeout(c.ctx, prepareTimeout)
		defer cancel()
		o, err := c.PDF(ctx, rec, report.PrintOptions{})
		if err != nil {
			c.s.log.Info("background conversion failed", "report", rec.ID, "err", err)
			return
		}
		o.Close()
	}()
}

func (c *sharedPDFs) Close() error {
	c.cancel()
	c.bg.Wait()
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
