// Package bufpool pools byte buffers by power-of-two size, for code that
// holds many files of a report site in memory at once (the client's
// archive writer, the daemon's site putter): a buffer made for each file
// was most of their allocation, and zeroing and collecting it a tenth of
// their CPU (on a VM that gives freed memory back to its host, fresh
// memory costs more again).
package bufpool

import (
	"math/bits"
	"sync"
)

// Pool keeps buffers of 1<<min up to 1<<max bytes, one class per power of
// two; a buffer for more gets its own size and is not kept.
type Pool struct {
	min     int
	classes []sync.Pool
}

// New is a pool of classes from 1<<minShift to 1<<maxShift bytes.
func New(minShift, maxShift int) *Pool {
	return &Pool{min: minShift, classes: make([]sync.Pool, maxShift-minShift+1)}
}

// Class is the class of a buffer for n bytes, or -1 past the largest (and
// for n < 1).
func (p *Pool) Class(n int) int {
	if n < 1 {
		return -1
	}
	c := max(bits.Len(uint(n-1)), p.min) - p.min
	if c >= len(p.classes) {
		return -1
	}
	return c
}

// Get returns an empty buffer with room for n bytes.
func (p *Pool) Get(n int) []byte {
	c := p.Class(n)
	if c < 0 {
		return make([]byte, 0, n)
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<(c+p.min))
}

// Put gives b back once nothing uses it; only buffers of a class's exact
// size are kept.
func (p *Pool) Put(b []byte) {
	c := p.Class(cap(b))
	if c < 0 || cap(b) != 1<<(c+p.min) {
		return
	}
	p.classes[c].Put(&b)
}
