package watch

import "time"

// clock is where the circuit reads the time; tests pass a fake one.
type clock interface{ Now() time.Time }

// clockFunc makes a func such as time.Now a clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

type circuitState int

const (
	circuitClosed  circuitState = iota // the server answers: files are sent
	circuitOpen                        // it does not: files wait for the next probe
	circuitProbing                     // a probe is in flight
)

func (s circuitState) String() string {
	return [...]string{"closed", "open", "probing"}[s]
}

// circuit is the outage breaker of a watch run. The first upload that finds
// the server unreachable opens it; while it is open nothing is sent, and a
// probe, due on a capped exponential schedule, decides when the server is
// back. Each outage in a row starts that schedule further along, so a
// server that keeps flapping is probed less often; a successful publish
// resets the count. It is owned by one goroutine.
type circuit struct {
	clock    clock
	min, max time.Duration // probe backoff: first wait and cap

	state   circuitState
	probeAt time.Time // when the next probe is due, while open
	probes  int       // failed probes in this outage
	outages int       // outages in a row, reset by a successful publish
	lastErr error     // why the server was last found unreachable
}

func newCircuit(c clock, min, max time.Duration) *circuit {
	return &circuit{clock: c, min: min, max: max}
}

// down says whether files must wait (open or probing).
func (c *circuit) down() bool { return c.state != circuitClosed }

// fail records that the server could not be reached; it reports whether
// this opened the circuit (the start of an outage).
func (c *circuit) fail(err error) (opened bool) {
	c.lastErr = err
	if c.down() {
		return false
	}
	c.state, c.probes = circuitOpen, 0
	c.outages++
	c.probeAt = c.clock.Now().Add(backoff(c.min, c.max, c.outages))
	return true
}

// startProbe says whether a probe is due now; if so the circuit waits for
// its outcome (probing) and no other probe starts meanwhile.
func (c *circuit) startProbe() bool {
	if c.state != circuitOpen || c.clock.Now().Before(c.probeAt) {
		return false
	}
	c.state = circuitProbing
	return true
}

// probed records a probe's outcome: nil closes the circuit, an error
// schedules the next probe further out.
func (c *circuit) probed(err error) {
	if err == nil {
		c.state = circuitClosed
		return
	}
	c.lastErr = err
	c.state = circuitOpen
	c.probes++
	c.probeAt = c.clock.Now().Add(backoff(c.min, c.max, c.outages+c.probes))
}

// published records that an upload got through: the next outage starts
// the probe schedule from the beginning.
func (c *circuit) published() { c.outages = 0 }
