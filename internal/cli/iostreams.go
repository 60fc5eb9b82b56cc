package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the command's standard streams and what they are connected
// to; tests hand in buffers and choose the TTY flags.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and ErrTTY say whether stdout/stderr are terminals: tables are
	// aligned and progress bars drawn only there.
	OutTTY bool
	ErrTTY bool
}

// SystemIO is the process's own streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
