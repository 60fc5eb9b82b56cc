package sniff

import (
	"bytes"
	"fmt"
	"io"
)

// Scan watches bytes stream by, as an io.Writer, and remembers what the
// text rule needs, so that an upload is checked in the same pass that
// stores and hashes it. Writes must come in file order.
type Scan struct {
	n      int64
	nulAt  int64
	hasNUL bool
}

// Write never fails.
func (s *Scan) Write(p []byte) (int, error) {
	if !s.hasNUL {
		if i := bytes.IndexByte(p, 0); i >= 0 {
			s.hasNUL, s.nulAt = true, s.n+int64(i)
		}
	}
	s.n += int64(len(p))
	return len(p), nil
}

// Size is how many bytes went by.
func (s *Scan) Size() int64 { return s.n }

// FirstNUL is the offset of the first NUL byte, if there was one.
func (s *Scan) FirstNUL() (int64, bool) { return s.nulAt, s.hasNUL }

// scanAll reads size bytes of r through a Scan in small pieces.
func scanAll(r io.ReaderAt, size int64) (*Scan, error) {
	s := new(Scan)
	buf := make([]byte, 64<<10)
	if _, err := io.CopyBuffer(s, io.NewSectionReader(r, 0, size), buf); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRead, err)
	}
	return s, nil
}
