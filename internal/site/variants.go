package site

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"strings"

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

var variantSuffix = map[string]string{Gzip: ".gz", Brotli: ".br", "": ".none"}

// VariantKey is the key of the enc (Gzip or Brotli) copy of the content
// object sha.
func VariantKey(sha, enc string) string { return ObjectKey(sha) + variantSuffix[enc] }

func noneKey(sha string) string { return ObjectKey(sha) + ".none" }

// objectSHA is the sha256 a key below cas/ belongs to: the object's own,
// or its variant's or marker's original; "" for other keys.
func objectSHA(key string) string {
	i := strings.LastIndexByte(key, '/')
	base := key[i+1:]
	sum, suffix, _ := strings.Cut(base, ".")
	if !isSHA256(sum) || key != ObjectKey(sum)+strings.TrimPrefix(base, sum) {
		return ""
	}
	switch suffix {
	case "", "gz", "br", "none":
		return sum
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
	// Gzip and Brotli are the copies' sizes; 0: there is none.
	Gzip, Brotli int64
}

// Size is the size of the enc copy (0: none).
func (v Variants) Size(enc string) int64 {
	switch enc {
	case Gzip:
		return v.Gzip
	case Brotli:
		return v.Brotli
	}
	return 0
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
	var ok bool
	var err error
	if v.Brotli, ok, err = stat(VariantKey(sha, Brotli)); err != nil {
		return Variants{}, err
	}
	v.Done = ok
	if v.Gzip, _, err = stat(VariantKey(sha, Gzip)); err != nil {
		return Variants{}, err
	}
	if !v.Done {
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
	o, err := store.Open(ctx, ObjectKey(sha))
	if errors.Is(err, blob.ErrNotFound) {
		return v, nil
	}
	if err != nil {
		return v, err
	}
	defer o.Close()
	size := o.Info().Size
	src := func() io.Reader { return io.NewSectionReader(o, 0, size) }
	if v.Gzip == 0 {
		if v.Gzip, err = variant(ctx, store, VariantKey(sha, Gzip), tempDir, src(), size, func(w io.Writer) io.WriteCloser {
			zw, _ := gzip.NewWriterLevel(w, gzipLevel) // the level is valid
			return zw
		}); err != nil {
			return v, err
		}
	}
	if v.Brotli, err = variant(ctx, store, VariantKey(sha, Brotli), tempDir, src(), size, func(w io.Writer) io.WriteCloser {
		return brotli.NewWriterLevel(w, brotliQuality)
	}); err != nil {
		return v, err
	}
	if v.Brotli == 0 {
		if _, err := store.Put(ctx, noneKey(sha), bytes.NewReader(nil), blob.PutOptions{IfNoneMatch: true}); err != nil && !errors.Is(err, blob.ErrExists) {
			return v, err
		}
	}
	v.Done = true
	return v, nil
}

// variant compresses src into memory (small files) or a temp file and
// stores it at key unless it saves less than a tenth; it returns the
// stored size (0: not worth it).
func variant(ctx context.Context, store blob.Store, key, tempDir string, src io.Reader, size int64, enc func(io.Writer) io.WriteCloser) (int64, error) {
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
		_, err = store.Put(ctx, key, bytes.NewReader(mem.Bytes()), opt)
	} else {
		if err := tf.Close(); err != nil {
			return 0, blob.StorageErr(err, "cannot compress the file")
		}
		_, err = blob.PutFile(ctx, store, key, tf.Name(), opt)
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
