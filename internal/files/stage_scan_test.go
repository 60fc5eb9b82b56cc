package files

import (
	"bytes"
	"testing"
	"testing/iotest"
)

// The content scan runs in the staging pass and must see every byte, in
// order, on the inline and the pipelined path alike.
func TestStageScansEveryByte(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, size := range []int{1, HeadSize + 1, copyBufSize + 1, 9 << 20} {
		for _, nulAt := range []int{-1, 0, size / 2, size - 1} {
			data := bytes.Repeat([]byte{'a'}, size)
			if nulAt >= 0 {
				data[nulAt] = 0
			}
			s, err := Stage(d.Blobs(), iotest.HalfReader(bytes.NewReader(data)), 0)
			if err != nil {
				t.Fatal(err)
			}
			at, found := s.Scan.FirstNUL()
			if s.Scan.Size() != int64(size) || found != (nulAt >= 0) || (found && at != int64(nulAt)) {
				t.Fatalf("size %d, NUL at %d: scan saw %d bytes, NUL %v at %d", size, nulAt, s.Scan.Size(), found, at)
			}
			s.Discard()
		}
	}
}
