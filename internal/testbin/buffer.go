package testbin

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one writer goroutine and concurrent
// readers: a process's output read by a test while the process runs.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
