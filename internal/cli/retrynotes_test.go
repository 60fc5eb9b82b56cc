package cli

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/client"
)

type refusingWriter struct{}

func (refusingWriter) Write([]byte) (int, error) { return 0, errors.New("done") }

// TestRetryNotes: one line per wait, in the documented format; above the
// progress bars while they are drawn, on stderr otherwise.
func TestRetryNotes(t *testing.T) {
	var stderr, bars bytes.Buffer
	n := &retryNotes{out: &stderr}
	refused := &client.Retry{Attempt: 3, Attempts: 9, Wait: 1734 * time.Millisecond, Err: syscall.ECONNREFUSED}
	n.note(*refused)
	if got, want := stderr.String(), "retrying in 1.7s (attempt 3/9): connection refused\n"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}

	stderr.Reset()
	restore := n.printAbove(&bars)
	n.note(client.Retry{Attempt: 2, Attempts: 9, Wait: 640*time.Millisecond + 400*time.Microsecond, Err: syscall.ECONNREFUSED})
	if stderr.Len() != 0 || bars.String() != "retrying in 640ms (attempt 2/9): connection refused\n" {
		t.Fatalf("with bars: stderr %q, bars %q", stderr.String(), bars.String())
	}
	restore()
	n.printAbove(refusingWriter{})
	n.note(*refused)
	if stderr.Len() == 0 {
		t.Fatal("a line the finished bars refused was lost")
	}
}
