package dirzip

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
)

// How WriteTo works: files up to smallFile bytes are read, hashed and
// compressed by a few workers into memory, ahead of the writer, and written
// in name order as raw entries; larger files are streamed by the writer
// itself when their turn comes. What an entry holds depends on its bytes
// only (deflated at BestSpeed, stored when deflating does not make it
// smaller or its type is compressed already), so the archive is the same
// whatever the number of workers or their timing.
const (
	smallFile = 1 << 20 // files prepared in memory by the workers
	window    = 64      // files prepared ahead of the writer at most
	bufSize   = 1 << 20 // buffer between the archive and w
)

// dosEpochDate is Epoch as an MS-DOS date (1980-01-01; its time is 0).
const dosEpochDate = 1<<5 | 1

// flates keeps deflate writers for reuse: each holds about 1 MiB of state,
// and a site has thousands of files.
var flates sync.Pool

func getFlate(w io.Writer) *flate.Writer {
	if fw, ok := flates.Get().(*flate.Writer); ok {
		fw.Reset(w)
		return fw
	}
	fw, _ := flate.NewWriter(w, flate.BestSpeed) // BestSpeed is a valid level
	return fw
}

// pooledFlate returns its writer to the pool when closed.
type pooledFlate struct{ *flate.Writer }

func (p pooledFlate) Close() error {
	err := p.Writer.Close()
	flates.Put(p.Writer)
	return err
}

// prepared is one file read and compressed by a worker.
type prepared struct {
	n      int64  // bytes read
	sum    []byte // sha256 of the bytes read
	crc    uint32
	method uint16
	data   []byte // the entry's bytes (deflated or stored)
	stream bool   // too large: the writer streams it itself
	err    error
}

// WriteTo writes the zip of t to w. wrap, when set, wraps every file's
// reader (a progress bar counts the bytes read); it may be called from
// several goroutines. A file that cannot be read, or that became something
// else than a regular file inside the folder since the scan, fails the
// write.
func (t *Tree) WriteTo(w io.Writer, wrap func(io.Reader) io.Reader) (Result, error) {
	root, err := os.OpenRoot(t.Dir)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	bw := bufio.NewWriterSize(w, bufSize)
	cw := &countWriter{w: bw}
	zw := zip.NewWriter(cw)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return pooledFlate{getFlate(w)}, nil
	})

	stop := make(chan struct{})
	defer close(stop)
	ordered := t.prepareAhead(root, wrap, stop)

	th := newTreeHash()
	var res Result
	for _, f := range t.Files {
		p := <-<-ordered
		if p.err == nil {
			if p.stream {
				p.n, p.sum, p.err = streamFile(zw, root, f, wrap)
			} else {
				p.err = writeRaw(zw, f, p)
			}
		}
		if p.err != nil {
			return res, fmt.Errorf("%s: %w", t.show(f.Name), unwrapPath(p.err))
		}
		res.Bytes += p.n
		th.add(f.Name, p.n, p.sum)
	}
	if err := zw.Close(); err != nil {
		return res, err
	}
	if err := bw.Flush(); err != nil {
		return res, err
	}
	res.ZipBytes, res.SHA256 = cw.n, th.sum()
	return res, nil
}

// prepareAhead starts the workers and returns the results in file order:
// one channel per file, at most window of them ahead of the writer, which
// bounds what is held in memory.
func (t *Tree) prepareAhead(root *os.Root, wrap func(io.Reader) io.Reader, stop <-chan struct{}) <-chan chan prepared {
	type job struct {
		f   File
		out chan prepared
	}
	ordered := make(chan chan prepared, window)
	jobs := make(chan job)
	go func() {
		defer close(jobs)
		for _, f := range t.Files {
			out := make(chan prepared, 1)
			select {
			case ordered <- out:
			case <-stop:
				return
			}
			select {
			case jobs <- job{f, out}:
			case <-stop:
				return
			}
		}
	}()
	for range min(runtime.GOMAXPROCS(0), 4) {
		go func() {
			for j := range jobs {
				j.out <- prepare(root, j.f, wrap)
			}
		}()
	}
	return ordered
}

// open opens a file of the tree, refusing what is no longer a regular file.
func open(root *os.Root, f File) (*os.File, error) {
	in, err := root.Open(f.Name)
	if err != nil {
		return nil, err
	}
	fi, err := in.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("no longer a regular file")
	}
	if err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// prepare reads one file and makes its entry's bytes, or leaves a large one
// to be streamed.
func prepare(root *os.Root, f File, wrap func(io.Reader) io.Reader) prepared {
	if f.Size > smallFile {
		return prepared{stream: true}
	}
	in, err := open(root, f)
	if err != nil {
		return prepared{err: err}
	}
	defer in.Close()
	var r io.Reader = in
	if wrap != nil {
		r = wrap(r)
	}
	// Read at most one byte past the limit: a file that grew since the scan
	// is streamed instead.
	raw, err := io.ReadAll(io.LimitReader(r, smallFile+1))
	if err != nil {
		return prepared{err: err}
	}
	if len(raw) > smallFile {
		return prepared{err: errors.New("grew past its size at scan time while being read; try again")}
	}
	s := sha256.Sum256(raw)
	p := prepared{n: int64(len(raw)), sum: s[:], crc: crc32.ChecksumIEEE(raw), method: zip.Store, data: raw}
	if stored[strings.ToLower(path.Ext(f.Name))] || len(raw) == 0 {
		return p
	}
	var b bytes.Buffer
	b.Grow(len(raw) / 2)
	fw := getFlate(&b)
	_, err = fw.Write(raw)
	if err == nil {
		err = fw.Close()
	}
	flates.Put(fw)
	if err != nil {
		return prepared{err: err}
	}
	if b.Len() < len(raw) {
		p.method, p.data = zip.Deflate, b.Bytes()
	}
	return p
}

// header is an entry's header: raw and streamed entries alike carry Epoch
// as their MS-DOS time only (CreateRaw does not convert Modified, so
// neither path sets it).
func header(f File, method uint16) *zip.FileHeader {
	h := &zip.FileHeader{Name: f.Name, Method: method, ModifiedDate: dosEpochDate}
	h.SetMode(0o644)
	return h
}

// writeRaw writes a prepared entry.
func writeRaw(zw *zip.Writer, f File, p prepared) error {
	h := header(f, p.method)
	h.CRC32 = p.crc
	h.CompressedSize64 = uint64(len(p.data))
	h.UncompressedSize64 = uint64(p.n)
	out, err := zw.CreateRaw(h)
	if err != nil {
		return err
	}
	_, err = out.Write(p.data)
	return err
}

// streamFile writes a large file's entry as it reads it.
func streamFile(zw *zip.Writer, root *os.Root, f File, wrap func(io.Reader) io.Reader) (int64, []byte, error) {
	in, err := open(root, f)
	if err != nil {
		return 0, nil, err
	}
	defer in.Close()
	method := uint16(zip.Deflate)
	if stored[strings.ToLower(path.Ext(f.Name))] {
		method = zip.Store
	}
	out, err := zw.CreateHeader(header(f, method))
	if err != nil {
		return 0, nil, err
	}
	var r io.Reader = in
	if wrap != nil {
		r = wrap(r)
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, sum), r)
	return n, sum.Sum(nil), err
}
