package ops

import (
	"fmt"
	"io"
	"time"
)

// progress writes a long command's progress lines: every step, and within
// a step at most one line every progressEvery.
type progress struct {
	w    io.Writer
	last time.Time
}

const progressEvery = 2 * time.Second

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) step(format string, args ...any) {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "migrate: "+format+"\n", args...)
	p.last = time.Now()
}

func (p *progress) tick(format string, args ...any) {
	if p.w == nil || time.Since(p.last) < progressEvery {
		return
	}
	p.step(format, args...)
}

// HumanSize is n in binary units, for progress lines.
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
