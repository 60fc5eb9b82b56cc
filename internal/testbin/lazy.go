package testbin

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Lazy builds its commands the first time a test asks for one, once per
// test process, so that `go test -run` of in-process tests alone pays for
// no build. TestMain calls Remove after m.Run.
type Lazy struct {
	pattern string
	cmds    []string
	once    sync.Once
	dir     string
	err     error
}

// NewLazy is a Lazy building cmds into a temporary directory named after
// pattern.
func NewLazy(pattern string, cmds ...string) *Lazy {
	return &Lazy{pattern: pattern, cmds: cmds}
}

// Dir builds the commands if that has not been done yet and returns the
// directory holding them; it fails t if the build failed.
func (l *Lazy) Dir(t testing.TB) string {
	t.Helper()
	l.once.Do(func() { l.dir, l.err = BuildTemp(l.pattern, l.cmds...) })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.dir
}

// Path is Dir joined with the command's name.
func (l *Lazy) Path(t testing.TB, cmd string) string {
	t.Helper()
	return filepath.Join(l.Dir(t), cmd)
}

// Remove deletes the binaries, if they were built. Call it after every
// test has finished.
func (l *Lazy) Remove() {
	if l.dir != "" {
		os.RemoveAll(l.dir)
	}
}
