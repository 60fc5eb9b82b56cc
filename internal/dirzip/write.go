package dirzip

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// How WriteTo works: files up to smallFile bytes are read and hashed by a
// few workers into memory, ahead of the writer, and written in name order
// as tar entries; larger files are streamed by the writer itself when their
// turn comes. The tar stream goes through one zstd encoder whose settings
// are all fixed here, so the archive is the same whatever the number of
// workers, their timing or the machine's GOMAXPROCS.
const (
	smallFile = 1 << 20 // files read into memory by the workers
	window    = 64      // files prepared ahead of the writer at most
	// bufSize is the buffer between the archive and w: small, because the
	// server reads a tar site as it arrives, and a site compresses 100
	// times or more, so 1 MiB held back a whole 68 MB site's archive
	// until its end (32 KiB is about 3 MB of files).
	bufSize = 32 << 10
)

// Fixed zstd settings. The encoder's default concurrency is GOMAXPROCS;
// it is pinned so that nothing about the machine reaches the encoder (the
// bytes do not depend on it today, TestSameBytesWhateverGOMAXPROCSAndConcurrency
// checks, but they are not promised to). One means the writer's goroutine
// compresses each block itself: on 2 cores, with the workers reading and
// hashing beside it, handing blocks to another goroutine (2) cost more CPU
// and was no faster (BenchmarkWriteTree, 2026-11-29: 196-225 vs 200-246
// CPU ms a run). The window is the SpeedFastest default, written out: the
// server refuses windows above 32 MiB, and a decoder needs about a window
// of memory. The checksum (xxhash64 of the tar, at the frame's end) lets
// the server tell a damaged stream from a sound one.
const (
	zstdConcurrency = 1
	zstdWindow      = 4 << 20
)

func newEncoder(w io.Writer, concurrency int) (*zstd.Encoder, error) {
	return zstd.NewWriter(w,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithWindowSize(zstdWindow),
		zstd.WithEncoderConcurrency(concurrency),
		zstd.WithEncoderCRC(true),
	)
}

// prepared is one file read and hashed by a worker.
type prepared struct {
	n      int64  // bytes read
	sum    []byte // sha256 of the bytes read (Tree.Hash)
	data   []byte // the file's bytes
	stream bool   // too large: the writer streams it itself
	err    error
}

// WriteTo writes the tar.zst of t to w. wrap, when set, wraps every file's
// reader (a progress bar counts the bytes read); it may be called from
// several goroutines. A file that cannot be read or that became something
// else than a regular file inside the folder since the scan fails the
// write, and so does a file streamed (over smallFile) whose size changed
// while it was read.
func (t *Tree) WriteTo(w io.Writer, wrap func(io.Reader) io.Reader) (Result, error) {
	return t.writeTo(w, wrap, zstdConcurrency)
}

func (t *Tree) writeTo(w io.Writer, wrap func(io.Reader) io.Reader, concurrency int) (res Result, err error) {
	root, err := os.OpenRoot(t.Dir)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	bw := bufio.NewWriterSize(w, bufSize)
	cw := &countWriter{w: bw}
	enc, err := newEncoder(cw, concurrency)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		if err != nil {
			// With a concurrency above one, wait for the block being
			// compressed so that nothing writes into bw once WriteTo has
			// returned.
			enc.Reset(io.Discard)
		}
	}()
	tw := tar.NewWriter(enc)

	stop := make(chan struct{})
	defer close(stop)
	ordered := t.prepareAhead(root, wrap, stop)

	th := newTreeHash()
	for _, f := range t.Files {
		p := <-<-ordered
		if p.err == nil {
			if p.stream {
				p.n, p.sum, p.err = streamFile(tw, root, f, wrap, t.Hashed)
			} else {
				p.err = writeEntry(tw, f, p.data)
				bufs.Put(p.data) // written: the encoder copied it
			}
		}
		if p.err != nil {
			return res, fmt.Errorf("%s: %w", t.show(f.Name), unwrapPath(p.err))
		}
		res.Bytes += p.n
		if t.Hashed {
			th.add(f.Name, p.n, p.sum)
		}
	}
	if err := tw.Close(); err != nil {
		return res, err
	}
	if err := enc.Close(); err != nil {
		return res, err
	}
	if err := bw.Flush(); err != nil {
		return res, err
	}
	res.ArchiveBytes = cw.n
	if t.Hashed {
		res.SHA256 = th.sum()
	}
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
				j.out <- prepare(root, j.f, wrap, t.Hashed)
			}
		}()
	}
	return ordered
}

// openFile opens name for reading without touching its access time where
// the system allows (openNoATime): a report just generated is read for
// the first time, and its atime update (relatime) would dirty every inode,
// a journal write per file. O_NOATIME is refused to who does not own the
// file (and is not root), and a file system may refuse it otherwise: any
// failure is retried with a plain open, whose error is the answer.
func openFile(root *os.Root, name string) (*os.File, error) {
	if openNoATime != 0 {
		if in, err := root.OpenFile(name, os.O_RDONLY|openNoATime, 0); err == nil {
			return in, nil
		}
	}
	return root.Open(name)
}

// open opens a file of the tree, refusing what is no longer a regular file.
func open(root *os.Root, f File) (*os.File, os.FileInfo, error) {
	in, err := openFile(root, f.Name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := in.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("no longer a regular file")
	}
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return in, fi, nil
}

// prepare reads one file into memory, or leaves a large one to be streamed.
func prepare(root *os.Root, f File, wrap func(io.Reader) io.Reader, hash bool) prepared {
	if f.Size > smallFile {
		return prepared{stream: true}
	}
	in, _, err := open(root, f)
	if err != nil {
		return prepared{err: err}
	}
	defer in.Close()
	var r io.Reader = in
	if wrap != nil {
		r = wrap(r)
	}
	// Room for the size at scan time and the read that finds the end, so
	// that a file that did not change is read without growing the buffer.
	// Read at most one byte past the limit: a file that grew past it since
	// the scan fails rather than being held in memory whole.
	b := bytes.NewBuffer(bufs.Get(int(f.Size) + readSlack))
	if _, err := b.ReadFrom(io.LimitReader(r, smallFile+1)); err != nil {
		bufs.Put(b.Bytes())
		return prepared{err: err}
	}
	if b.Len() > smallFile {
		bufs.Put(b.Bytes())
		return prepared{err: errors.New("grew past its size at scan time while being read; try again")}
	}
	p := prepared{n: int64(b.Len()), data: b.Bytes()}
	if hash {
		s := sha256.Sum256(p.data)
		p.sum = s[:]
	}
	return p
}

// header is an entry's tar header: everything but the name and size is
// fixed (mode 0644, Epoch, owner 0 with no names, no access or change
// time). archive/tar picks the format: ustar when the name fits (100 bytes,
// or 255 split at a slash) and is ASCII, else PAX records; both depend on
// the name only.
func header(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: Epoch}
}

// writeEntry writes a file read into memory.
func writeEntry(tw *tar.Writer, f File, data []byte) error {
	if err := tw.WriteHeader(header(f.Name, int64(len(data)))); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// streamFile writes a large file's entry as it reads it. A tar header
// carries the size before the content, so the size is the one the open
// file has now, and a file that is written to meanwhile fails instead of
// being sent cut or padded.
func streamFile(tw *tar.Writer, root *os.Root, f File, wrap func(io.Reader) io.Reader, hashed bool) (int64, []byte, error) {
	in, fi, err := open(root, f)
	if err != nil {
		return 0, nil, err
	}
	defer in.Close()
	size := fi.Size()
	if err := tw.WriteHeader(header(f.Name, size)); err != nil {
		return 0, nil, err
	}
	var r io.Reader = in
	if wrap != nil {
		r = wrap(r)
	}
	var w io.Writer = tw
	var sum hash.Hash
	if hashed {
		sum = sha256.New()
		w = io.MultiWriter(tw, sum)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(r, size), make([]byte, 256<<10))
	if err != nil {
		return n, nil, err
	}
	if n < size {
		return n, nil, errors.New("shrank while being read; try again")
	}
	// Past the size: read directly, so that the progress hook counts the
	// file's bytes only once.
	if m, _ := in.Read(make([]byte, 1)); m > 0 {
		return n, nil, errors.New("grew while being read; try again")
	}
	if sum == nil {
		return n, nil, nil
	}
	return n, sum.Sum(nil), nil
}
