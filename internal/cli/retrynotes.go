package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/client"
)

// retryNotes prints one line on stderr for every wait before a retry, on a
// terminal and in CI logs alike, so a command that seems stuck says why.
// Data goes to stdout, so the lines never mix into --json output.
type retryNotes struct {
	mu    sync.Mutex
	out   io.Writer
	above io.Writer // the progress bars while they are drawn
}

func (n *retryNotes) note(r client.Retry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	line := fmt.Sprintf("retrying in %s (attempt %d/%d): %s\n", roundWait(r.Wait), r.Attempt, r.Attempts, r.Reason())
	if n.above != nil {
		// A line printed under live bars would be drawn over. The bars
		// refuse writes once they are done; the line then goes below.
		if _, err := io.WriteString(n.above, line); err == nil {
			return
		}
	}
	io.WriteString(n.out, line)
}

// printAbove sends the lines to w (progress bars) until the returned
// function is called.
func (n *retryNotes) printAbove(w io.Writer) (restore func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.above = w
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.above = nil
	}
}

// roundWait keeps a jittered wait readable: 1.7s, 340ms.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
