package chromium

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/testfixture"
)

// Pages are made ahead of jobs, ChromiumSpares of them, each in a browser
// context and on an origin of its own: taking one never hands out a context
// or an origin another page had, and the pool fills up again by itself.
func TestSparePagesAreFreshContexts(t *testing.T) {
	testfixture.NeedChromium(t)
	c := newEngine(t, func(c *Config) { c.ChromiumTabs = 1; c.ChromiumSpares = 3 })
	c.Warm()
	full := func() {
		t.Helper()
		for end := time.Now().Add(2 * time.Minute); len(c.spare) < 3; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%d spare pages after 2 minutes, want 3", len(c.spare))
			}
		}
	}
	full()
	contexts, origins := map[string]bool{}, map[string]bool{}
	for range 6 {
		p, err := c.take()
		if err != nil {
			t.Fatal(err)
		}
		id := string(chromedp.FromContext(p.ctx).BrowserContextID)
		if id == "" || contexts[id] || origins[p.origin] {
			t.Errorf("page with context %q and origin %s: not fresh", id, p.origin)
		}
		contexts[id], origins[p.origin] = true, true
		p.dispose()
		c.release(p.b, false, false)
	}
	full()
	text := testfixture.PDFText(t, printOK(t, c, []byte("<p>spare page job</p>")))
	testfixture.WantText(t, text, "spare page job")
}

func TestSitePagePath(t *testing.T) {
	for in, want := range map[string]string{
		"/a.html": "a.html", "/sub/": "sub/index.html", "/": "index.html", "/x/../b%20c.htm": "b c.htm",
		"/style.css": "", "/data/x.json": "",
	} {
		got, ok := sitePagePath(in)
		if ok != (want != "") || got != want {
			t.Errorf("sitePagePath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// Beyond ChromiumTabs, a spare page waits until no job prints and none has
// for sparesIdleGap: jobs one after another are a few milliseconds apart,
// and a page started in such a gap would be made beside the next job.
func TestSparesWaitForAnIdleGap(t *testing.T) {
	c := &chromium{cfg: &Config{ChromiumTabs: 1}}
	now := time.Now()
	if c.busy(now) {
		t.Error("busy before any job")
	}
	c.printing.Add(1)
	if !c.busy(now) {
		t.Error("not busy while a job prints")
	}
	c.printing.Add(-1)
	c.jobEnd.Store(now.UnixNano())
	for _, tc := range []struct {
		after time.Duration
		busy  bool
	}{{2 * time.Millisecond, true}, {sparesIdleGap - time.Millisecond, true}, {sparesIdleGap, false}, {time.Second, false}} {
		if got := c.busy(now.Add(tc.after)); got != tc.busy {
			t.Errorf("%v after a job ended: busy %v, want %v", tc.after, got, tc.busy)
		}
	}
}

// The second maker works only while no job runs and the pool has room.
func TestSpareHelperOnlyWhileIdle(t *testing.T) {
	c := &chromium{cfg: &Config{ChromiumTabs: 1}, spare: make(chan *jobPage, 4), quit: make(chan struct{})}
	stopped := func() {
		t.Helper()
		for end := time.Now().Add(time.Minute); c.helping.Load(); time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("helper still running after a minute")
			}
		}
	}
	c.printing.Add(1) // a job prints
	c.help()
	stopped()
	if n := c.spares.Load(); n != 0 {
		t.Errorf("helper made %d pages while a job printed", n)
	}
	c.printing.Add(-1)
	c.spares.Store(4) // full
	c.help()
	stopped()
	if n := c.spares.Load(); n != 4 {
		t.Errorf("helper changed a full pool's count to %d", n)
	}
}
