package files

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
)

// copyBufSize is the unit of the upload copy. Multipart hands out at most
// 4 KiB per Read; collecting a full buffer first turns a 1 GiB upload into
// a few thousand write(2)s instead of a quarter of a million.
const copyBufSize = 256 << 10

// copyBufs is how many buffers a large upload cycles through: one being
// filled from the body while the others are hashed and written.
const copyBufs = 4

// writebackEvery is how much a staged file may hold unflushed before the
// kernel is asked to start writing it out, so that the fsync at the end
// waits for the last stretch only instead of the whole file.
const writebackEvery = 8 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// errWrite marks a failure of the temp file (not of the client's body).
var errWrite = errors.New("write staged file")

// copyStaged copies src into f, hashing as it goes, and returns the size
// and the first HeadSize bytes. A body that fits one buffer is handled
// inline; a larger one is pipelined: this goroutine reads the body while
// a second one hashes and writes, so SHA-256 and the page-cache copy
// overlap with receiving instead of adding to it.
func copyStaged(f *os.File, h hash.Hash, src io.Reader) (int64, []byte, error) {
	first := bufPool.Get().(*[]byte)
	m, rerr := fill(src, *first)
	head := append([]byte(nil), (*first)[:min(m, HeadSize)]...)
	if rerr != nil {
		defer bufPool.Put(first)
		w := stagedWriter{f: f, h: h}
		if err := w.write((*first)[:m]); err != nil {
			return w.n, head, err
		}
		if rerr == io.EOF {
			rerr = nil
		}
		return w.n, head, rerr
	}
	return pipeline(f, h, src, first, head)
}

func pipeline(f *os.File, h hash.Hash, src io.Reader, first *[]byte, head []byte) (int64, []byte, error) {
	free := make(chan *[]byte, copyBufs)
	type chunk struct {
		buf *[]byte
		n   int
	}
	full := make(chan chunk, copyBufs)
	type result struct {
		n   int64
		err error
	}
	done := make(chan result, 1)
	bufs := []*[]byte{first}
	for range copyBufs - 1 {
		b := bufPool.Get().(*[]byte)
		bufs = append(bufs, b)
		free <- b
	}
	defer func() {
		for _, b := range bufs {
			bufPool.Put(b)
		}
	}()
	var failed sync.Once
	stop := make(chan struct{})
	go func() {
		w := stagedWriter{f: f, h: h}
		var err error
		for c := range full {
			if err == nil {
				if err = w.write((*c.buf)[:c.n]); err != nil {
					failed.Do(func() { close(stop) })
				}
			}
			free <- c.buf
		}
		done <- result{w.n, err}
	}()
	full <- chunk{first, copyBufSize}
	var rerr error
	for rerr == nil {
		var b *[]byte
		select {
		case b = <-free:
		case <-stop:
			rerr = errStopped
			continue
		}
		var m int
		m, rerr = fill(src, *b)
		if m > 0 {
			full <- chunk{b, m}
		} else {
			free <- b
		}
	}
	close(full)
	res := <-done
	if res.err != nil {
		return res.n, head, res.err
	}
	if rerr == io.EOF {
		rerr = nil
	}
	return res.n, head, rerr
}

var errStopped = errors.New("stopped")

// stagedWriter hashes and writes chunks, starting writeback as it goes.
type stagedWriter struct {
	f          *os.File
	h          hash.Hash
	n, flushed int64
}

func (w *stagedWriter) write(chunk []byte) error {
	if len(chunk) == 0 {
		return nil
	}
	w.h.Write(chunk)
	if _, err := w.f.Write(chunk); err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	w.n += int64(len(chunk))
	if w.n-w.flushed >= writebackEvery {
		startWriteback(w.f, w.flushed, w.n-w.flushed)
		w.flushed = w.n
	}
	return nil
}

// fill reads until buf is full, the reader ends (io.EOF) or fails.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
