package cli

import (
	"context"
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress draws mpb bars on stderr. A nil *progress draws nothing, which
// is what commands get when stderr is not a terminal or --json is on, so
// machine output and CI logs stay clean.
type progress struct{ p *mpb.Progress }

func newProgress(ctx context.Context, io *IOStreams, json bool) *progress {
	if !io.ErrTTY || json {
		return nil
	}
	return &progress{p: mpb.NewWithContext(ctx, mpb.WithOutput(io.ErrOut), mpb.WithWidth(80),
		// ErrTTY already decided that bars are wanted; mpb would otherwise
		// probe the writer itself and stay silent on anything but *os.File.
		mpb.WithAutoRefresh())}
}

// writer prints lines above the bars; nil when no bars are drawn.
func (p *progress) writer() io.Writer {
	if p == nil {
		return nil
	}
	return p.p
}

// bar tracks one transfer; total < 0 means unknown.
func (p *progress) bar(name string, total int64) *bar {
	if p == nil {
		return nil
	}
	if total < 0 {
		total = 0
	}
	b := p.p.AddBar(total,
		mpb.PrependDecorators(decor.Name(shorten(name, 32), decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f", decor.WCSyncSpace), decor.Percentage(decor.WCSyncSpace)),
	)
	return &bar{b: b}
}

// wait returns once every bar is done or aborted.
func (p *progress) wait() {
	if p != nil {
		p.p.Wait()
	}
}

// bar is one progress bar; its methods are no-ops on nil.
type bar struct{ b *mpb.Bar }

// reader counts what passes through r.
func (b *bar) reader(r io.Reader) io.Reader {
	if b == nil {
		return r
	}
	return &countingReader{r: r, b: b.b}
}

// restart is called when a retry re-opens the file.
func (b *bar) restart() {
	if b != nil {
		b.b.SetCurrent(0)
	}
}

// done marks the bar finished (ok) or aborted; every bar must get one call
// or wait never returns.
func (b *bar) done(ok bool) {
	if b == nil {
		return
	}
	if ok {
		b.b.SetTotal(-1, true)
	} else {
		b.b.Abort(false)
	}
}

type countingReader struct {
	r io.Reader
	b *mpb.Bar
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.b.IncrBy(n)
	return n, err
}

// shorten keeps the end of a long path (its file name) so the counters
// still fit on a line.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
