package markdown

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/moby/sys/reexec"
)

// ChildName is the renderer child: the running binary started again
// (reexec.Command) with this name as argv[0]. It reads framed Markdown
// documents on stdin and answers each with a framed HTML document on
// stdout, until stdin closes. A binary becomes the child only through
// reexec.Init, which every binary that may start one calls first thing
// (cmd/reportd, bench/convert, the TestMain of every test package that
// links this one).
const ChildName = "reportd-render-markdown"

func init() {
	reexec.Register(ChildName, func() { os.Exit(Serve(os.Stdin, os.Stdout)) })
}

// maxFrame bounds one document either way.
const maxFrame = 1 << 32

// A frame is a status byte (0 ok, 1 error text), a uint64 length, the bytes.
func writeFrame(w io.Writer, status byte, b []byte) error {
	var h [9]byte
	h[0] = status
	binary.BigEndian.PutUint64(h[1:], uint64(len(b)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

func readFrame(r io.Reader, limit uint64) (byte, []byte, error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint64(h[1:])
	if n > limit {
		return 0, nil, fmt.Errorf("frame of %d bytes is over the limit", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return h[0], b, err
}

// Serve is the child's loop: it reads framed Markdown documents from in
// and answers each with a framed HTML document. It returns the exit code.
func Serve(in io.Reader, out io.Writer) int {
	r, w := bufio.NewReader(in), bufio.NewWriter(out)
	for {
		_, src, err := readFrame(r, maxFrame)
		if err != nil {
			return 0 // the parent closed the pipe
		}
		html, err := Render(src)
		if err != nil {
			err = writeFrame(w, 1, []byte(err.Error()))
		} else {
			err = writeFrame(w, 0, html)
		}
		if err != nil || w.Flush() != nil {
			return 1
		}
	}
}

// Exchange sends src to a child over w and reads its answer from r (the
// child's stdin and stdout). A document the child could not render is a
// *RenderError; any other error means the child or its pipes failed.
func Exchange(w io.Writer, r io.Reader, src []byte) ([]byte, error) {
	if err := writeFrame(w, 0, src); err != nil {
		return nil, err
	}
	status, b, err := readFrame(r, maxFrame)
	if err != nil {
		return nil, err
	}
	if status != 0 {
		return nil, &RenderError{string(b)}
	}
	return b, nil
}

// RenderError is the child's answer for a document it could not render.
type RenderError struct{ Msg string }

func (e *RenderError) Error() string { return e.Msg }
