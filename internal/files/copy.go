package files

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// copyBufSize is the unit of the upload copy. Multipart hands out at most
// 4 KiB per Read; collecting a full buffer first turns a 1 GiB upload into
// a few thousand write(2)s instead of a quarter of a million.
const copyBufSize = 256 << 10

// copyBufs is how many buffers a large upload cycles through: one being
// filled from the body while the others are hashed and written.
const copyBufs = 6

// writebackEvery is how much a staged file may hold unflushed before the
// kernel is asked to start writing it out, so that the fsync at the end
// waits for the last stretch only instead of the whole file.
const writebackEvery = 8 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// errWrite marks a failure of the temp file (not of the client's body).
var errWrite = errors.New("write staged file")

// copyStaged copies src into f, hashing as it goes, and returns the size
// and the first HeadSize bytes. A body that fits one buffer is handled
// inline; a larger one is pipelined over three goroutines — this one
// reads the body, one hashes, one writes — so that SHA-256 and the
// page-cache copy run beside the socket reads on every core instead of
// one after another.
func copyStaged(f *os.File, h hash.Hash, src io.Reader) (int64, []byte, error) {
	first := bufPool.Get().(*[]byte)
	m, rerr := fill(src, *first)
	head := append([]byte(nil), (*first)[:min(m, HeadSize)]...)
	if rerr != nil {
		defer bufPool.Put(first)
		h.Write((*first)[:m])
		w := stagedWriter{f: f}
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

// slot is one buffer in flight; the hasher and the writer each release
// it once, and the second release gives it back to the reader.
type slot struct {
	buf  *[]byte
	n    int
	refs atomic.Int32
}

func pipeline(f *os.File, h hash.Hash, src io.Reader, first *[]byte, head []byte) (int64, []byte, error) {
	slots := make([]*slot, copyBufs)
	free := make(chan *slot, copyBufs)
	for i := range slots {
		b := first
		if i > 0 {
			b = bufPool.Get().(*[]byte)
		}
		slots[i] = &slot{buf: b}
		free <- slots[i]
	}
	defer func() {
		for _, sl := range slots {
			bufPool.Put(sl.buf)
		}
	}()
	release := func(sl *slot) {
		if sl.refs.Add(-1) == 0 {
			free <- sl
		}
	}
	toHash := make(chan *slot, copyBufs)
	toWrite := make(chan *slot, copyBufs)
	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		stopOnce sync.Once
		w        = stagedWriter{f: f}
		werr     error
	)
	wg.Go(func() {
		for sl := range toHash {
			h.Write((*sl.buf)[:sl.n])
			release(sl)
		}
	})
	wg.Go(func() {
		for sl := range toWrite {
			if werr == nil {
				if werr = w.write((*sl.buf)[:sl.n]); werr != nil {
					stopOnce.Do(func() { close(stop) })
				}
			}
			release(sl)
		}
	})
	send := func(sl *slot, n int) {
		sl.n = n
		sl.refs.Store(2)
		toHash <- sl
		toWrite <- sl
	}
	send(<-free, copyBufSize) // the first buffer is already full
	var rerr error
	for rerr == nil {
		var sl *slot
		select {
		case sl = <-free:
		case <-stop:
			rerr = errStopped
			continue
		}
		var m int
		m, rerr = fill(src, *sl.buf)
		if m > 0 {
			send(sl, m)
		} else {
			free <- sl
		}
	}
	close(toHash)
	close(toWrite)
	wg.Wait()
	if werr != nil {
		return w.n, head, werr
	}
	if rerr == io.EOF {
		rerr = nil
	}
	return w.n, head, rerr
}

var errStopped = errors.New("stopped")

// stagedWriter writes chunks, starting writeback as it goes.
type stagedWriter struct {
	f          *os.File
	n, flushed int64
}

func (w *stagedWriter) write(chunk []byte) error {
	if len(chunk) == 0 {
		return nil
	}
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
