package chromium

import (
	"io"
	"time"
)

// Chromium keeps much of a large document's memory after its page is gone,
// so the every-8th-job memory check (recyclePolicy) alone let a browser
// sit at gigabytes, idle, after a few large Markdown jobs. The bound
// (Config.MaxWorkerRSS) is therefore also checked after every large job and
// once the browser has had no job for a while (supervisor.idleCheck).
const (
	largeJobBytes  = 1 << 20          // input or output PDF above this makes a job large
	idleCheckAfter = 10 * time.Second // quiet time after the last job before the idle check
)

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}
