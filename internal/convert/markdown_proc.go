package convert

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// goldmark has inputs that take quadratic time (`[a](` repeated 100,000
// times, 400 KB, renders for ~40 s) and no way to stop a render half way.
// So Markdown is rendered in warm child processes, the running binary
// started again as renderChildName (reexec.go), and a child still rendering at
// the job's deadline is killed: the CPU work really stops, the engine's
// slot is free again, and the next job gets a fresh child. Starting a child
// costs ~150 ms (the binary's package initialisation), paid off the job's
// path once per child; a job pays only the pipe round trip.

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

// renderChild is the renderer: it reads framed Markdown documents from in
// and answers each with a framed HTML document.
func renderChild(in io.Reader, out io.Writer) int {
	r, w := bufio.NewReader(in), bufio.NewWriter(out)
	for {
		_, src, err := readFrame(r, 1<<32)
		if err != nil {
			return 0 // the parent closed the pipe
		}
		html, err := renderMarkdown(src)
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

// mdRenderer is a pool of warm renderer children; size bounds the idle ones.
type mdRenderer struct {
	size   int
	mu     sync.Mutex
	idle   []*mdChild
	closed bool
}

type mdChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	exited <-chan struct{} // closed once the child is waited for (startLocked)
}

func newMDRenderer(size int) *mdRenderer {
	return &mdRenderer{size: size}
}

func startMDChild() (*mdChild, error) {
	cmd := childCommand(renderChildName)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// From a thread that stays while the child lives: Pdeathsig fires when
	// the thread that forked the child exits, which the Go runtime may do
	// at any time to an unlocked one (a warm child died so, "the Markdown
	// renderer failed: EOF").
	exited, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	return &mdChild{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), exited: exited}, nil
}

func (c *mdChild) kill() {
	killGroup(c.cmd.Process.Pid)
	c.stdin.Close()
	<-c.exited
}

func (c *mdChild) render(src []byte) ([]byte, error) {
	if err := writeFrame(c.stdin, 0, src); err != nil {
		return nil, err
	}
	status, b, err := readFrame(c.out, 1<<32)
	if err != nil {
		return nil, err
	}
	if status != 0 {
		return nil, &renderError{string(b)}
	}
	return b, nil
}

type renderError struct{ msg string }

func (e *renderError) Error() string { return e.msg }

// warm starts one child ahead of the first job.
func (p *mdRenderer) warm() {
	if c, err := startMDChild(); err == nil {
		p.put(c)
	}
}

func (p *mdRenderer) put(c *mdChild) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.size {
		p.idle = append(p.idle, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.kill()
	}
}

func (p *mdRenderer) get() *mdChild {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c
	}
	return nil
}

// close kills the idle children; busy ones die with their job's context
// and are not taken back.
func (p *mdRenderer) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.kill()
	}
}

// render turns src into an HTML document in a child, which is killed if
// ctx ends or timeout passes first. Errors are *report.Error. A warm child
// that turns out to be dead (its pipe broken before it answered: killed
// while idle, by the OOM killer say) is the renderer's fault, not the
// document's: the job runs once more on a fresh child.
func (p *mdRenderer) render(ctx context.Context, src []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := p.get()
	warm := c != nil
	for {
		if c == nil {
			var err error
			if c, err = startMDChild(); err != nil {
				return nil, report.Wrap(report.Conversion, err, "cannot start the Markdown renderer")
			}
		}
		html, err, retry := p.renderOn(ctx, c, src, timeout)
		if !retry || !warm {
			return html, err
		}
		c, warm = nil, false
	}
}

// renderOn runs one attempt on child c; retry reports that c was broken
// before the document could have mattered.
func (p *mdRenderer) renderOn(ctx context.Context, c *mdChild, src []byte, timeout time.Duration) (html []byte, err error, retry bool) {
	type result struct {
		html []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		html, err := c.render(src)
		done <- result{html, err}
	}()
	select {
	case r := <-done:
		var re *renderError
		switch {
		case r.err == nil:
			p.put(c)
			return r.html, nil, false
		case errors.As(r.err, &re):
			p.put(c)
			return nil, report.Wrap(report.Conversion, r.err, "cannot render the Markdown"), false
		default:
			c.kill()
			return nil, report.Wrap(report.Conversion, r.err, "the Markdown renderer failed"), ctx.Err() == nil
		}
	case <-ctx.Done():
		c.kill() // ends the render; the goroutine above sees EOF
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, timedOut(ctx.Err(), "the Markdown", int64(len(src)), timeout), false
		}
		return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled"), false
	}
}
