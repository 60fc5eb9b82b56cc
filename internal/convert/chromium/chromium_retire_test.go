package chromium

import (
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testfixture"
)

// A finished job's page is frozen and disposed once no job runs; the pages
// waiting and the spares are at most twice ChromiumSpares (the oldest goes
// at once beyond that), and a page
// retired with now set (a failed or large job) goes at once.
func TestFinishedPagesAreDisposedOnceIdle(t *testing.T) {
	testfixture.NeedChromium(t)
	c := newEngine(t, func(c *Config) { c.ChromiumTabs = 1; c.ChromiumSpares = 3 })
	c.Warm()
	gone := func(what string, p *jobPage) {
		t.Helper()
		for end := time.Now().Add(2 * time.Minute); p.ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: page not disposed after 2 minutes", what)
			}
		}
	}
	waiting := func() int {
		c.reaper.mu.Lock()
		defer c.reaper.mu.Unlock()
		return len(c.reaper.pages)
	}

	const spares = 3
	pages := make([]*jobPage, 2*spares+1) // over the bound whatever the pool holds
	for i := range pages {
		p, err := c.take()
		if err != nil {
			t.Fatal(err)
		}
		c.release(p.b, false, false)
		pages[i] = p
	}
	c.printing.Add(1) // a job runs: nothing is disposed but what is over the bound
	t0 := time.Now()
	for _, p := range pages {
		c.retirePage(p, false)
	}
	if n := waiting(); n > 2*spares {
		t.Errorf("%d pages waiting, want at most %d", n, 2*spares)
	}
	gone("the oldest page over the bound", pages[0])
	if time.Since(t0) < retireDelay && pages[len(pages)-1].ctx.Err() != nil {
		t.Error("the newest page was disposed while a job ran")
	}
	c.printing.Add(-1)
	for _, p := range pages {
		gone("a page once idle", p)
	}

	p, err := c.take()
	if err != nil {
		t.Fatal(err)
	}
	c.release(p.b, false, false)
	c.retirePage(p, true)
	if waiting() != 0 {
		t.Error("a page retired with now set waits")
	}
	gone("a page retired with now set", p)

	// The engine goes on: a job after all this prints.
	text := testfixture.PDFText(t, printOK(t, c, []byte("<p>after retiring</p>")))
	testfixture.WantText(t, text, "after retiring")
}

// A finished page that the browser will not freeze is disposed of at once,
// even while a job runs, and holds no place among the waiting pages.
// (Before, the freeze's error was dropped and the page waited like a frozen
// one.) The browser is made to refuse by asking for a state it does not
// know: a healthy page freezes.
func TestUnfreezablePageIsDisposedAtOnce(t *testing.T) {
	testfixture.NeedChromium(t)
	c := newEngine(t, func(c *Config) { c.ChromiumTabs = 1; c.ChromiumSpares = 2 })
	// A page left waiting would wait this long while a job runs: far
	// longer than the test waits for the page to go.
	c.reaper.delay = time.Hour
	c.reaper.freeze = "no-such-state"
	c.Warm()
	p, err := c.take()
	if err != nil {
		t.Fatal(err)
	}
	c.release(p.b, false, false)
	c.printing.Add(1) // a job runs: a page that froze would wait
	defer c.printing.Add(-1)
	c.retirePage(p, false)
	for end := time.Now().Add(2 * time.Minute); p.ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("an unfreezable page not disposed after 2 minutes while a job ran")
		}
	}
	c.reaper.mu.Lock()
	n := len(c.reaper.pages)
	c.reaper.mu.Unlock()
	if n != 0 {
		t.Errorf("%d pages waiting after the unfreezable one was disposed, want 0", n)
	}
}
