package site

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"

	"github.com/reportd/reportd/internal/blob"
)

// Variant is a precompressed copy of a file, stored at ObjectKey(SHA256)
// like any content object.
type Variant struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Key is the content key holding v's bytes.
func (v Variant) Key() string { return ObjectKey(v.SHA256) }

func (v *Variant) valid() bool { return v == nil || isSHA256(v.SHA256) && v.Size >= 0 }

// MinCompressSize is the smallest file given precompressed variants:
// below it, the saving does not pay for a second object.
const MinCompressSize = 1024

// Compression levels of the variants, made once per file at ingest. On
// coverage-like HTML (16 KiB pages, one loaded core) gzip 6 ran at ~22 MB/s
// to 20.3% of the size and gzip 9 at ~17 MB/s to 19.2%; brotli 5 at
// ~15 MB/s to 19.7% and brotli 6 at ~12 MB/s to 19.1%: the higher levels
// cost a quarter more time for a few percent, and ingest has to keep pace
// with unpacking.
const (
	gzipLevel     = gzip.DefaultCompression
	brotliQuality = 5
)

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

// variants compresses the size bytes src opens with gzip and brotli, at
// once on two cores, and stores each copy that is at least 10% smaller.
func (p *putter) variants(ctx context.Context, src func() io.Reader, size int64) (gz, br *Variant, err error) {
	var wg sync.WaitGroup
	var gzErr error
	wg.Go(func() {
		gz, gzErr = p.variant(ctx, src(), size, func(w io.Writer) io.WriteCloser {
			zw, _ := gzip.NewWriterLevel(w, gzipLevel) // the level is valid
			return zw
		})
	})
	br, err = p.variant(ctx, src(), size, func(w io.Writer) io.WriteCloser {
		return brotli.NewWriterLevel(w, brotliQuality)
	})
	wg.Wait()
	if gzErr != nil {
		return nil, nil, gzErr
	}
	if err != nil {
		return nil, nil, err
	}
	return gz, br, nil
}

// variant compresses src into memory (small files) or a temp file and
// stores it content-addressed unless it saves less than a tenth.
func (p *putter) variant(ctx context.Context, src io.Reader, size int64, enc func(io.Writer) io.WriteCloser) (*Variant, error) {
	limit := size - size/10 // larger than this: not worth it
	h := sha256.New()
	var out io.Writer
	var mem *bytes.Buffer
	var tf *os.File
	if size <= smallFile {
		mem = &bytes.Buffer{}
		out = mem
	} else {
		f, err := os.CreateTemp(p.tempDir, "site-z-*")
		if err != nil {
			return nil, blob.StorageErr(err, "cannot store the site")
		}
		tf = f
		defer os.Remove(f.Name()) // gone already if the store adopted it
		defer f.Close()
		out = f
	}
	cw := &capWriter{w: io.MultiWriter(out, h), limit: limit}
	zw := enc(cw)
	if _, err := io.Copy(zw, blob.ContextReader(ctx, src)); err != nil {
		if errors.Is(err, errNotWorth) {
			return nil, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, blob.StorageErr(err, "cannot store the site")
	}
	if err := zw.Close(); err != nil {
		if errors.Is(err, errNotWorth) {
			return nil, nil
		}
		return nil, blob.StorageErr(err, "cannot store the site")
	}
	v := &Variant{SHA256: hex.EncodeToString(h.Sum(nil)), Size: cw.n}
	err := p.store1(ctx, v.SHA256, func(key string) error {
		opt := blob.PutOptions{IfNoneMatch: true, Size: v.Size}
		if mem != nil {
			_, err := p.store.Put(ctx, key, bytes.NewReader(mem.Bytes()), opt)
			return err
		}
		if err := tf.Sync(); err != nil {
			return blob.StorageErr(err, "cannot store the site")
		}
		if err := tf.Close(); err != nil {
			return blob.StorageErr(err, "cannot store the site")
		}
		_, err := blob.PutFile(ctx, p.store, key, tf.Name(), opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
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
