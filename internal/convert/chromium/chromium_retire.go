package chromium

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Disposing of a page (its target, browser context and renderer process)
// costs the browser and the renderer CPU. Done right after the job, it ran
// beside the next job of a burst and made that one's load and print slower
// by a third to a half (BENCHMARKS.md, "2026-11-28 (later)"). So after a
// job that went well, the page's document is frozen at once (no script,
// timer, frame or callback of it runs again) and the page is disposed once
// no job has run for sparesIdleGap and the spare pool is full again (or
// the pages waiting and the spares are over twice the pool), or
// retireDelay after its job at the latest. The pages waiting and the
// spare pages are at most twice chromium_spares (the pages kept ahead are
// the memory a deployment gives pages, and convert/spares.go sizes the
// default for both: a burst as long as the pool then runs with neither
// making nor disposal beside it, and the next burst, finding the pool
// part-used, still without disposal); beyond, the oldest is disposed at
// once. A failed, crashed or
// large job's page is disposed at once, as before.
const retireDelay = 5 * time.Second // the longest a frozen page waits: a default pool's burst (spares.go) on a busy machine

// reaper holds the frozen pages waiting to be disposed.
type reaper struct {
	mu      sync.Mutex
	pages   []retiredPage
	running bool
	delay   time.Duration // retireDelay when 0; tests lengthen it
	// freeze is the lifecycle state a retired page is put in: frozen when
	// empty; tests set one the browser refuses.
	freeze page.SetWebLifecycleStateState
}

type retiredPage struct {
	p  *jobPage
	at time.Time
}

// retirePage ends p after its job: at once when now is set, else frozen at
// once and disposed later (see above).
func (c *chromium) retirePage(p *jobPage, now bool) {
	if now || p.ctx.Err() != nil {
		p.dispose()
		return
	}
	r := &c.reaper
	r.mu.Lock()
	r.pages = append(r.pages, retiredPage{p: p, at: time.Now()})
	var over *jobPage
	if len(r.pages)+int(max(0, c.spares.Load())) > 2*max(1, cap(c.spare)) {
		over = r.pages[0].p
		r.pages = r.pages[1:]
	}
	start := !r.running
	r.running = true
	r.mu.Unlock()
	// Frozen off the job's path. A page the browser would not freeze may
	// still run script (timers, workers) while it waits, beside the next
	// jobs: it is disposed of at once instead. (An error because the page
	// was disposed meanwhile needs nothing more.)
	go func() {
		_, err := chromedp.Call(p.ctx, page.SetWebLifecycleState,
			page.SetWebLifecycleStateParams{State: cmp.Or(r.freeze, page.SetWebLifecycleStateStateFrozen)})
		if err != nil && p.ctx.Err() == nil {
			c.log.Debug("Chromium: a finished page could not be frozen; disposing of it now", "err", err)
			c.unretire(p)
			p.dispose()
		}
	}()
	if over != nil {
		over.dispose()
	}
	if start {
		go c.reap()
	}
}

// unretire takes p off the waiting pages, if it is still there (the reaper
// may have taken it already), so that it holds no place among them.
func (c *chromium) unretire(p *jobPage) {
	r := &c.reaper
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pages = slices.DeleteFunc(r.pages, func(rp retiredPage) bool { return rp.p == p })
}

// reap disposes the waiting pages, one at a time while no job runs and
// any that waited retireDelay, until none is left or the engine closes.
func (c *chromium) reap() {
	r := &c.reaper
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.quit:
			r.mu.Lock()
			for _, rp := range r.pages {
				rp.p.dispose()
			}
			r.pages, r.running = nil, false
			r.mu.Unlock()
			return
		case <-tick.C:
		}
		for {
			now := time.Now()
			r.mu.Lock()
			if len(r.pages) == 0 {
				r.running = false
				r.mu.Unlock()
				return
			}
			rp := r.pages[0]
			// The pool's refill comes first (a job that comes next
			// needs a page more than the memory back), while the pages
			// waiting and the spares stay within twice the pool.
			spares := int(max(0, c.spares.Load()))
			refilling := spares < cap(c.spare) && len(r.pages)+spares <= 2*max(1, cap(c.spare))
			if (c.busy(now) || refilling) && now.Sub(rp.at) < cmp.Or(r.delay, retireDelay) {
				r.mu.Unlock()
				break
			}
			r.pages = r.pages[1:]
			r.mu.Unlock()
			// One at a time, so a job that starts meanwhile shares the
			// CPU with one disposal at most; a browser that hangs on it
			// holds the rest back for a second at most.
			done := make(chan struct{})
			go func() { rp.p.cancel(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Second):
			}
		}
	}
}
