package dirzip

import (
	"math/bits"
	"sync"
)

// Buffers for the files read into memory, pooled by power-of-two size
// from 4 KiB to 64 KiB (a report site's pages, scripts and styles): a
// buffer made for each file was most of the client's allocation, and
// zeroing and collecting it a tenth of its CPU. Larger files get a buffer
// of their own size, so rounding up adds at most 32 KiB a file to what
// the files read ahead of the writer hold (at most window of them).
const (
	minBufShift = 12
	maxBufShift = 16
)

var bufPools [maxBufShift - minBufShift + 1]sync.Pool

// readSlack is room past the size at scan time for the read that finds
// the end (bytes.MinRead).
const readSlack = 512

// bufClass is the pool of a buffer for n bytes, or -1 past the largest
// (and for n < 1).
func bufClass(n int) int {
	if n < 1 {
		return -1
	}
	c := max(bits.Len(uint(n-1)), minBufShift) - minBufShift
	if c >= len(bufPools) {
		return -1
	}
	return c
}

// getBuf returns an empty buffer with room for n bytes.
func getBuf(n int) []byte {
	c := bufClass(n)
	if c < 0 {
		return make([]byte, 0, n)
	}
	if b, ok := bufPools[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<(c+minBufShift))
}

// putBuf gives b back once nothing uses it; only buffers of a class's
// exact size are kept.
func putBuf(b []byte) {
	c := bufClass(cap(b))
	if c < 0 || cap(b) != 1<<(c+minBufShift) {
		return
	}
	bufPools[c].Put(&b)
}
