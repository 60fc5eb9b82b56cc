package watch

import (
	"errors"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand: no sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// within checks that the next probe is due in d, the backoff's nominal
// value give or take its ±20% jitter, and never beyond the cap.
func dueWithin(t *testing.T, c *circuit, clk *fakeClock, nominal time.Duration) {
	t.Helper()
	wait := c.probeAt.Sub(clk.Now())
	lo, hi := nominal*8/10, min(nominal*12/10, c.max)
	if wait < lo || wait > hi {
		t.Fatalf("next probe in %v, want %v..%v", wait, lo, hi)
	}
}

func TestCircuitOutage(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCircuit(clk, time.Second, 8*time.Second)
	refused := errors.New("connection refused")

	if c.down() || c.startProbe() {
		t.Fatal("a new circuit is closed and probes nothing")
	}
	if !c.fail(refused) || !c.down() || c.state != circuitOpen {
		t.Fatalf("first failure: state %v, want open", c.state)
	}
	if c.fail(errors.New("again")) || c.lastErr.Error() != "again" {
		t.Fatal("a failure while open opens nothing new but keeps the latest error")
	}
	dueWithin(t, c, clk, time.Second)

	// Not due yet: no probe. Due: one probe, and no second while it runs.
	if c.startProbe() {
		t.Fatal("probe started before it was due")
	}
	clk.advance(2 * time.Second)
	if !c.startProbe() || c.state != circuitProbing {
		t.Fatalf("due probe not started: state %v", c.state)
	}
	if c.startProbe() {
		t.Fatal("second probe started while one is in flight")
	}

	// Failed probes back off exponentially up to the cap.
	for i, nominal := range []time.Duration{2, 4, 8, 8, 8} {
		c.probed(refused)
		if c.state != circuitOpen || !c.down() {
			t.Fatalf("probe %d failed: state %v, want open", i+1, c.state)
		}
		dueWithin(t, c, clk, nominal*time.Second)
		clk.advance(c.probeAt.Sub(clk.Now()))
		if !c.startProbe() {
			t.Fatalf("probe %d not started when due", i+2)
		}
	}

	c.probed(nil)
	if c.down() || c.state != circuitClosed {
		t.Fatalf("successful probe: state %v, want closed", c.state)
	}
}

// TestCircuitFlapping: outages in a row start the probe schedule further
// along; a successful publish starts it over.
func TestCircuitFlapping(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCircuit(clk, time.Second, time.Minute)
	for outage, nominal := range []time.Duration{1, 2, 4} {
		c.fail(errors.New("down"))
		dueWithin(t, c, clk, nominal*time.Second)
		clk.advance(time.Minute)
		if !c.startProbe() {
			t.Fatalf("outage %d: no probe", outage+1)
		}
		c.probed(nil)
	}
	c.published()
	c.fail(errors.New("down"))
	dueWithin(t, c, clk, time.Second)
}

func TestCircuitStateNames(t *testing.T) {
	for s, want := range map[circuitState]string{circuitClosed: "closed", circuitOpen: "open", circuitProbing: "probing"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}
