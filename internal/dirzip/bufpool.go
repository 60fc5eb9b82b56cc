package dirzip

import (
	"math/bits"
	"sync"
)

// Buffers for the files read into memory, pooled by power-of-two size
// from 4 KiB to smallFile's class: a buffer made for each file was most
// of the client's allocation, and zeroing and collecting it a tenth of
// its CPU.
const (
	minBufShift = 12
	maxBufShift = 21 // 1<<maxBufShift >= smallFile+readSlack (bufpool_test.go)
)

var bufPools [maxBufShift - minBufShift + 1]sync.Pool

// readSlack is room past the size at scan time for the read that finds
// the end (bytes.MinRead).
const readSlack = 512

// bufClass is the pool of a buffer for n bytes, or -1 past the largest.
func bufClass(n int) int {
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
