package site

import (
	"io"

	"github.com/klauspost/compress/zstd"
)

// maxZstdWindow bounds the window a .tar.zst may ask the decoder to hold:
// the frame header names it, so without a bound a few bytes could make the
// daemon allocate gigabytes, and a site read as it arrives holds it for as
// long as its upload lasts. The zstd tool's levels up to 19 use at most
// 8 MiB (without --long), reportctl's stream 4 MiB.
const maxZstdWindow = 8 << 20

// zstdReader is a streaming zstd decoder whose Close releases it.
type zstdReader struct{ d *zstd.Decoder }

func (z zstdReader) Read(p []byte) (int, error) { return z.d.Read(p) }
func (z zstdReader) Close() error               { z.d.Close(); return nil }

// newZstd decodes r with bounded memory: one frame after another (as the
// zstd tool writes them), checksums verified, and a window of at most
// maxZstdWindow; two goroutines decode ahead of the reader.
func newZstd(r io.Reader) (io.ReadCloser, error) {
	d, err := zstd.NewReader(r, zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderConcurrency(2))
	if err != nil {
		return nil, err
	}
	return zstdReader{d}, nil
}
