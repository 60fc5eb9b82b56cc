package site

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync/atomic"

	"github.com/reportd/reportd/internal/report"
)

// Source is what a site is made of: an archive in a staged file, a tar
// archive as it arrives (Stream), or a list of named parts. Ingest may
// read it twice (once to check everything, once to store: stores without
// batches), so archives are given as io.ReaderAt (an *os.File of the
// staged upload) and parts as openers that may be called twice; a stream
// is read once, by Stage.
type Source struct {
	format string // "zip", "tar.gz", "tar.zst", "tar", "parts"
	r      io.ReaderAt
	size   int64
	parts  []Part
	stream io.Reader // a tar archive read once as it arrives (Stream)
}

// Part is one file of a multi-file upload: a relative name and an opener
// (called once per pass).
type Part struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// Zip is a .zip archive of size bytes read through r.
func Zip(r io.ReaderAt, size int64) Source { return Source{format: "zip", r: r, size: size} }

// TarGz is a gzip-compressed tar archive (.tar.gz, .tgz) of size bytes.
func TarGz(r io.ReaderAt, size int64) Source { return Source{format: "tar.gz", r: r, size: size} }

// TarZst is a zstd-compressed tar archive (.tar.zst, .tzst) of size bytes.
func TarZst(r io.ReaderAt, size int64) Source { return Source{format: "tar.zst", r: r, size: size} }

// Tar is an uncompressed tar archive of size bytes.
func Tar(r io.ReaderAt, size int64) Source { return Source{format: "tar", r: r, size: size} }

// Stream is a tar archive in format ("tar", "tar.gz", "tar.zst") read once,
// as it arrives: only Stage takes it. While it arrives its compression
// ratio is held to the limit against the bytes so far plus an allowance
// (streamAllowance), and once it ended to the limit against the bytes read, as a staged
// archive is against its size. The read stops at the archive's end, so
// trailing bytes do not count: a caller that also keeps the archive may
// retry a refusal from the staged copy to get the whole archive's verdict.
func Stream(r io.Reader, format string) Source { return Source{format: format, stream: r} }

// Streamable tells whether an archive of format can be read as it arrives.
func Streamable(format string) bool {
	return format == "tar" || format == "tar.gz" || format == "tar.zst"
}

// Parts is a site given file by file.
func Parts(parts ...Part) Source { return Source{format: "parts", parts: parts} }

type entryKind int

const (
	kFile entryKind = iota
	kDir
	kSkip // archive metadata (a pax global header)
	kBad  // a link, device, fifo or unknown type: refused
)

// header is one archive entry as the walk reports it.
type header struct {
	raw   string    // the name as the archive spells it
	kind  entryKind //
	what  string    // kBad: what it is ("a symbolic link")
	csize int64     // bound on the compressed bytes behind it (zip), 0 if none
}

// damaged is the error for an archive that cannot be read to its end.
func damaged(format, at string, err error) error { return damagedWhere(format, "at", at, err) }

// damagedWhere is damaged with the position word ("at" an entry, "after" it).
func damagedWhere(format, where, at string, err error) error {
	var re *report.Error
	if errors.As(err, &re) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if at == "" {
		return report.Wrap(report.Validation, err, fmt.Sprintf("the %s archive is damaged or truncated: %v", format, err))
	}
	return report.Wrap(report.Validation, err, fmt.Sprintf("the %s archive is damaged or truncated %s %q: %v", format, where, at, err))
}

// walk calls fn for each entry in order, with its content for files.
// g bounds what the walk itself may expand (tar.gz) and how many entries
// it may see (checked by fn).
func (s Source) walk(ctx context.Context, g *guard, fn func(h header, r io.Reader) error) error {
	switch s.format {
	case "zip":
		return s.walkZip(ctx, g, fn)
	case "tar", "tar.gz", "tar.zst":
		return s.walkTar(ctx, g, fn)
	case "parts":
		for _, p := range s.parts {
			if err := ctx.Err(); err != nil {
				return err
			}
			if p.Open == nil {
				return report.Errorf(report.Validation, "part %q has no content", p.Name)
			}
			if err := func() error {
				rc, err := p.Open()
				if err != nil {
					return err
				}
				defer rc.Close()
				return fn(header{raw: p.Name, kind: kFile}, rc)
			}(); err != nil {
				return err
			}
		}
		return nil
	}
	return report.Errorf(report.Validation, "unknown site source")
}

func (s Source) walkZip(ctx context.Context, g *guard, fn func(h header, r io.Reader) error) error {
	zr, err := zip.NewReader(s.r, s.size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return report.Wrap(report.Validation, err, fmt.Sprintf("not a readable zip archive: %v", err))
	}
	if len(zr.File) > g.maxEntries {
		return tooManyEntries(g.maxEntries)
	}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := header{raw: f.Name, csize: min(int64(min(f.CompressedSize64, 1<<62)), s.size)}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			h.kind = kDir
		case mode&fs.ModeSymlink != 0:
			h.kind, h.what = kBad, "a symbolic link"
		case mode.IsRegular():
			h.kind = kFile
		default:
			h.kind, h.what = kBad, "not a regular file"
		}
		if h.kind != kFile {
			if err := fn(h, nil); err != nil {
				return err
			}
			continue
		}
		if err := func() error {
			rc, err := f.Open()
			if err != nil {
				return damaged("zip", f.Name, err)
			}
			defer rc.Close()
			if err := fn(h, rc); err != nil {
				return damaged("zip", f.Name, err)
			}
			return nil
		}(); err != nil {
			return err
		}
	}
	return nil
}

func (s Source) walkTar(ctx context.Context, g *guard, fn func(h header, r io.Reader) error) error {
	var in io.Reader
	var arrived *arrivedReader
	if s.stream != nil {
		arrived = &arrivedReader{r: s.stream}
		g.arrived = &arrived.n
		in = arrived
	} else {
		in = io.NewSectionReader(s.r, 0, s.size)
	}
	var expanded *ratioReader
	switch s.format {
	case "tar.gz":
		zr, err := gzip.NewReader(in)
		if err != nil {
			return report.Wrap(report.Validation, err, fmt.Sprintf("not a readable gzip file: %v", err))
		}
		defer zr.Close()
		expanded = &ratioReader{r: zr, g: g}
		in = expanded
	case "tar.zst":
		zr, err := newZstd(in)
		if err != nil {
			return report.Wrap(report.Validation, err, fmt.Sprintf("not a readable zstd file: %v", err))
		}
		defer zr.Close()
		expanded = &ratioReader{r: zr, g: g}
		in = expanded
	}
	tr := tar.NewReader(in)
	last := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		th, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !(errors.Is(err, tar.ErrInsecurePath) && th != nil) {
			return damagedWhere(s.format, "after", last, err)
		}
		last = th.Name
		h := header{raw: th.Name}
		switch th.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
			h.kind = kFile
		case tar.TypeDir:
			h.kind = kDir
			if th.Size > 0 {
				h.kind, h.what = kBad, "a folder with content"
			}
		case tar.TypeXGlobalHeader:
			h.kind = kSkip
		case tar.TypeSymlink:
			h.kind, h.what = kBad, "a symbolic link"
		case tar.TypeLink:
			h.kind, h.what = kBad, "a hard link"
		case tar.TypeChar, tar.TypeBlock:
			h.kind, h.what = kBad, "a device file"
		case tar.TypeFifo:
			h.kind, h.what = kBad, "a named pipe"
		default:
			h.kind, h.what = kBad, fmt.Sprintf("an entry of unsupported type %q", th.Typeflag)
		}
		var r io.Reader
		if h.kind == kFile {
			r = tr
		}
		if err := fn(h, r); err != nil {
			return damaged(s.format, th.Name, err)
		}
	}
	if s.format != "tar" {
		// Read the end of the compressed stream so its checksum is
		// verified, allowing the usual tar record padding and no more.
		n, err := io.Copy(io.Discard, io.LimitReader(in, 1<<20+1))
		if err != nil {
			return damaged(s.format, "", err)
		}
		if n > 1<<20 {
			return report.Errorf(report.Validation, "the %s archive has more than 1 MiB of data after its end", s.format)
		}
	}
	if arrived != nil {
		// Now that the archive's size is known, the ratio the whole
		// archive would have been held to.
		g.arrived, g.archive = nil, max(arrived.n.Load(), 1)
		out := g.total
		if expanded != nil {
			out = max(out, expanded.n)
		}
		if out > g.floor && out/g.ratio > g.archive {
			return g.bomb("")
		}
	}
	return nil
}

// ratioReader stops a decompressed stream that grows past the ratio limit
// relative to the whole archive, whatever the tar layer does with it.
type ratioReader struct {
	r io.Reader
	g *guard
	n int64
}

func (r *ratioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if r.n > r.g.floor && r.n/r.g.ratio > r.g.archiveSize() {
		return n, r.g.bomb("")
	}
	return n, err
}

// streamAllowance is how many bytes past the ratio limit a stream may
// expand to while it arrives, in 32nds of Options.MaxBytes (64 MiB at the
// default 2 GiB): a site's first megabytes can be far more compressible
// than the whole (reportctl's tar.zst of a coverage site is 115 times
// smaller, runs of it more than 200). It is an absolute allowance, not a
// factor, so that a bomb stops after writing at most that much; the exact
// ratio is checked once the archive ended.
const streamAllowance = 32

// arrivedReader counts a streamed archive's bytes as they arrive: the
// ratio guard compares what came out with them (guard.archiveSize).
type arrivedReader struct {
	r io.Reader
	n atomic.Int64 // the guard's arrived
}

func (r *arrivedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n.Add(int64(n))
	return n, err
}
