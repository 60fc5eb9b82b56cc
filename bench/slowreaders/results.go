package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

// markdown is the results table: one row per phase, the attacked ones
// against the baseline.
func (b *bench) markdown() string {
	var s strings.Builder
	fmt.Fprintf(&s, "Build: `%s`. reportd defaults (max_connections 1024 per listener); attackers reconnect 100 ms after being dropped. "+
		"Normal clients: 4 uploaders (keep-alive), a ping every 100 ms on a new connection, 2 readers of a small content-origin page, "+
		"a content-origin fetch every 100 ms on a new connection; %v per phase; a failed ping counts as its 10 s timeout. "+
		"Load average %s before, %s after.\n\n", b.label, b.measure, b.loadBefore, b.loadAfter)
	s.WriteString("| Phase | Attackers connected (reconnects) | Uploads/s (vs baseline) | Upload errors | Ping p50 / p99 / max (fails, of them busy) | Content page reads/s (vs baseline) | Content fetch p50 / p99 / max (fails, of them busy) | Displaced / refused / cut | Load |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	var base phase
	for i, p := range b.phases {
		if i == 0 {
			base = p
		}
		ups, pgs := float64(p.uploads)/p.secs, float64(p.pages)/p.secs
		att := "-"
		if i > 0 {
			att = fmt.Sprintf("%d (%d)", p.attackersUp, p.attackerReconnect)
		}
		fmt.Fprintf(&s, "| %s | %s | %.1f (%s) | %d | %s (%d of %d, %d busy) | %.1f (%s) | %s (%d of %d, %d busy) | %s | %s |\n", p.name, att,
			ups, pct(ups, float64(base.uploads)/base.secs), p.uploadErrs,
			lat(p.pings), p.pingFails, len(p.pings), p.pingBusy, pgs, pct(pgs, float64(base.pages)/base.secs),
			lat(p.contentPings), p.contentPingFails, len(p.contentPings), p.contentPingBusy, orDash(p.guard), p.load)
	}
	return s.String()
}

func pct(v, base float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*v/base)
}

func lat(sorted []time.Duration) string {
	if len(sorted) == 0 {
		return "-"
	}
	r := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return r(benchkit.Pct(sorted, 50)) + " / " + r(benchkit.Pct(sorted, 99)) + " / " + r(sorted[len(sorted)-1])
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
