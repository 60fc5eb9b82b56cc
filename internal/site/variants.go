package site

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"

	"github.com/reportd/reportd/internal/blob"
)

// # Precompressed variants
//
// Variants are made after a site is published, not while it is ingested,
// and belong to content, not to sites: the gzip and brotli copies of the
// object cas/<p>/<sha> live at cas/<p>/<sha>.gz and cas/<p>/<sha>.br
// (VariantKey), so a file every upload repeats is compressed once ever.
// MakeVariants writes the gzip copy first, then the brotli copy, each only
// if it saves at least a tenth, and last, when the brotli copy did not
// pay, an empty marker cas/<p>/<sha>.none: the original is done when .br
// or .none exists, so a file whose compression does not pay is tried
// once, and a crash half-way makes it be tried again (IfNoneMatch keeps
// what is there). GC keeps a variant or marker exactly as long as its
// original.

// Content codings of the variants.
const (
	Gzip   = "gzip"
	Brotli = "br"
)

// Encoder is one content coding site files are precompressed with.
type Encoder struct {
	Name   string                           // the Content-Encoding token
	Suffix string                           // of the copy's key (VariantKey)
	New    func(w io.Writer) io.WriteCloser // a compressor writing to w
}

// Encoders is every variant made and served, in the order MakeVariants
// makes them; the last one's copy (or the .none marker) marks an object
// done, and at equal q-values a client gets the later one (content's
// negotiate). Adding a coding is one row here.
var Encoders = []Encoder{
	{Name: Gzip, Suffix: ".gz", New: pooled(func() resetWriter {
		zw, _ := gzip.NewWriterLevel(nil, gzipLevel) // the level is valid
		return zw
	})},
	{Name: Brotli, Suffix: ".br", New: pooled(func() resetWriter {
		return brotli.NewWriterLevel(nil, brotliQuality)
	})},
}

// resetWriter is a compressor that can start over on another writer.
type resetWriter interface {
	io.WriteCloser
	Reset(w io.Writer)
}

// pooled makes New of a compressor reused once closed: each holds
// hundreds of KiB to MiBs of tables, and a site's thousands of small
// files otherwise spend more CPU allocating and collecting them than
// compressing (a 10,011-file site: ~25 s of the worker's CPU).
func pooled(newWriter func() resetWriter) func(w io.Writer) io.WriteCloser {
	pool := &sync.Pool{New: func() any { return newWriter() }}
	return func(w io.Writer) io.WriteCloser {
		zw := pool.Get().(resetWriter)
		zw.Reset(w)
		return &pooledWriter{resetWriter: zw, pool: pool}
	}
}

// pooledWriter returns its compressor to the pool at Close; one not
// closed (a copy given up half-way) is left to the garbage collector.
type pooledWriter struct {
	resetWriter
	pool *sync.Pool
}

func (p *pooledWriter) Close() error {
	if p.resetWriter == nil {
		return nil // closed already
	}
	err := p.resetWriter.Close()
	p.resetWriter.Reset(io.Discard) // drops the reference to the output
	p.pool.Put(p.resetWriter)
	p.resetWriter = nil
	return err
}

// noneSuffix marks an object whose compression did not pay.
const noneSuffix = ".none"

// encoder is enc's row of Encoders.
func encoder(enc string) (Encoder, bool) {
	for _, e := range Encoders {
		if e.Name == enc {
			return e, true
		}
	}
	return Encoder{}, false
}

// MinCompressSize is the smallest file given precompressed variants:
// below it, the saving does not pay for a second object.
const MinCompressSize = 1024

// Compression levels of the variants, made once per content object in
// the background. On coverage-like HTML (16 KiB pages, one loaded core)
// gzip 6 ran at ~22 MB/s to 20.3% of the size and gzip 9 at ~17 MB/s to
// 19.2%; brotli 5 at ~15 MB/s to 19.7% and brotli 6 at ~12 MB/s to 19.1%.
const (
	gzipLevel     = gzip.DefaultCompression
	brotliQuality = 5
)

// VariantKey is the key of the enc (a name in Encoders) copy of the
// content object sha; "" is the .none marker's.
func VariantKey(sha, enc string) string {
	if enc == "" {
		return noneKey(sha)
	}
	e, _ := encoder(enc)
	return ObjectKey(sha) + e.Suffix
}

func noneKey(sha string) string { return ObjectKey(sha) + noneSuffix }

// objectSHA is the sha256 a key below cas/ belongs to: the object's own,
// or its variant's or marker's original; "" for other keys.
func objectSHA(key string) string {
	i := strings.LastIndexByte(key, '/')
	base := key[i+1:]
	sum, suffix, _ := strings.Cut(base, ".")
	if !isSHA256(sum) || key != ObjectKey(sum)+strings.TrimPrefix(base, sum) {
		return ""
	}
	if suffix == "" || "."+suffix == noneSuffix {
		return sum
	}
	for _, e := range Encoders {
		if "."+suffix == e.Suffix {
			return sum
		}
	}
	return ""
}

// Compressible tells whether files of content type ct get precompressed
// variants: text, scripts, JSON, XML, SVG, WebAssembly and uncompressed
// fonts; images, archives, video and woff fonts are compressed already.
func Compressible(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	switch mt = strings.TrimSpace(mt); {
	case strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/xml", mt == "image/svg+xml",
		mt == "application/wasm", mt == "font/ttf", mt == "image/vnd.microsoft.icon":
		return true
	}
	return false
}

// Wants tells whether f is given variants: compressible and large enough.
func Wants(f File) bool { return f.Size >= MinCompressSize && Compressible(f.ContentType) }

// Variants tells which copies of a content object exist.
type Variants struct {
	// Done: MakeVariants has finished with the object (whatever paid).
	Done bool
	// Sizes are the copies' sizes by coding (Encoders' names); a coding
	// missing or 0: there is none.
	Sizes map[string]int64
}

// Size is the size of the enc copy (0: none).
func (v Variants) Size(enc string) int64 { return v.Sizes[enc] }

// Any tells whether there is at least one copy.
func (v Variants) Any() bool {
	for _, n := range v.Sizes {
		if n > 0 {
			return true
		}
	}
	return false
}

func (v *Variants) set(enc string, n int64) {
	if n <= 0 {
		return
	}
	if v.Sizes == nil {
		v.Sizes = make(map[string]int64, len(Encoders))
	}
	v.Sizes[enc] = n
}

// LookupVariants tells which variants of the content object sha exist.
func LookupVariants(ctx context.Context, store blob.Store, sha string) (Variants, error) {
	var v Variants
	if !isSHA256(sha) {
		return v, nil
	}
	stat := func(key string) (int64, bool, error) {
		i, err := store.Stat(ctx, key)
		if errors.Is(err, blob.ErrNotFound) {
			return 0, false, nil
		}
		return i.Size, err == nil, err
	}
	// The last coding first: its copy means done, as the marker does.
	for i := len(Encoders) - 1; i >= 0; i-- {
		e := Encoders[i]
		n, ok, err := stat(ObjectKey(sha) + e.Suffix)
		if err != nil {
			return Variants{}, err
		}
		v.set(e.Name, n)
		if i == len(Encoders)-1 {
			v.Done = ok
		}
	}
	if !v.Done {
		var err error
		if _, v.Done, err = stat(noneKey(sha)); err != nil {
			return Variants{}, err
		}
	}
	return v, nil
}

// MakeVariants makes the missing variants of the content object sha (see
// above), staging copies above 256 KiB in tempDir. A missing original is
// not an error: there is nothing to compress.
func MakeVariants(ctx context.Context, store blob.Store, sha, tempDir string) (Variants, error) {
	v, err := LookupVariants(ctx, store, sha)
	if err != nil || v.Done || !isSHA256(sha) {
		return v, err
	}
	ok, err := variantsInto(ctx, store, storePut{store}, sha, &v, Encoders, tempDir)
	if err != nil || !ok {
		return v, err
	}
	if v.Size(Encoders[len(Encoders)-1].Name) == 0 {
		if _, err := store.Put(ctx, noneKey(sha), bytes.NewReader(nil), blob.PutOptions{IfNoneMatch: true}); err != nil && !errors.Is(err, blob.ErrExists) {
			return v, err
		}
	}
	v.Done = true
	return v, nil
}

// variantSink stores a compressed copy, from memory or from a temp file
// it takes.
type variantSink interface {
	put(ctx context.Context, key string, data []byte, opt blob.PutOptions) error
	putFile(ctx context.Context, key, path string, opt blob.PutOptions) error
}

// storePut stores each copy durably on its own.
type storePut struct{ s blob.Store }

func (p storePut) put(ctx context.Context, key string, data []byte, opt blob.PutOptions) error {
	_, err := p.s.Put(ctx, key, bytes.NewReader(data), opt)
	return err
}

func (p storePut) putFile(ctx context.Context, key, path string, opt blob.PutOptions) error {
	_, err := blob.PutFile(ctx, p.s, key, path, opt)
	return err
}

// batchPut stages each copy in a batch (MakeVariantsOf).
type batchPut struct{ b blob.Batch }

func (p batchPut) put(ctx context.Context, key string, data []byte, opt blob.PutOptions) error {
	return p.b.Put(ctx, key, bytes.NewReader(data), opt)
}

func (p batchPut) putFile(ctx context.Context, key, path string, opt blob.PutOptions) error {
	return p.b.Adopt(ctx, key, path, opt)
}

// compressed compresses src into memory (small files) or a temp file and
// stores it at key through dst unless it saves less than a tenth; it
// returns the stored size (0: not worth it).
func compressed(ctx context.Context, key, tempDir string, src io.Reader, size int64, enc func(io.Writer) io.WriteCloser, dst variantSink) (int64, error) {
	limit := size - size/10 // larger than this: not worth it
	var out io.Writer
	var mem *bytes.Buffer
	var tf *os.File
	if size <= smallFile {
		mem = bytes.NewBuffer(make([]byte, 0, limit))
		out = mem
	} else {
		f, err := os.CreateTemp(tempDir, "site-z-*")
		if err != nil {
			return 0, blob.StorageErr(err, "cannot compress the file")
		}
		tf = f
		defer os.Remove(f.Name()) // gone already if the store adopted it
		defer f.Close()
		out = f
	}
	cw := &capWriter{w: out, limit: limit}
	zw := enc(cw)
	if _, err := io.Copy(zw, blob.ContextReader(ctx, src)); err != nil {
		zw.Close() // back to its pool; what it writes is refused
		if errors.Is(err, errNotWorth) {
			return 0, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, blob.StorageErr(err, "cannot compress the file")
	}
	if err := zw.Close(); err != nil {
		if errors.Is(err, errNotWorth) {
			return 0, nil
		}
		return 0, blob.StorageErr(err, "cannot compress the file")
	}
	opt := blob.PutOptions{IfNoneMatch: true, Size: cw.n}
	var err error
	if mem != nil {
		err = dst.put(ctx, key, mem.Bytes(), opt)
	} else {
		if err := tf.Close(); err != nil {
			return 0, blob.StorageErr(err, "cannot compress the file")
		}
		err = dst.putFile(ctx, key, tf.Name(), opt)
	}
	if err != nil && !errors.Is(err, blob.ErrExists) {
		return 0, err
	}
	return cw.n, nil
}

// errNotWorth stops a compression whose output grew past its limit.
var errNotWorth = &notWorth{}

type notWorth struct{}

func (*notWorth) Error() string { return "compressed copy saves too little" }

// capWriter counts bytes and fails once they pass limit.
type capWriter struct {
	w     io.Writer
	limit int64
	n     int64
}

func (c *capWriter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	if c.n > c.limit {
		return 0, errNotWorth
	}
	return c.w.Write(b)
}
