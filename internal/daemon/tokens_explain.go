package daemon

import (
	"strings"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/tokens"
)

// ExplainCreated is the paragraph `reportd token create` prints about
// what creating t (one of ts, the tokens now) changes for everyone else,
// and what it does not: the first token closes writes to anonymous
// clients, which must not come as a surprise (a running watch, CI jobs,
// the dashboard), while reads and the links already handed out stay as
// they were unless auth.reads is on.
func ExplainCreated(c config.Config, t tokens.Token, ts []tokens.Token) string {
	others := 0
	for _, o := range ts {
		if o.ID != t.ID && o.RevokedAt == nil {
			others++
		}
	}
	reads := "reads stay open to anyone (auth.reads is false): listing and viewing reports, " +
		"the dashboard, badges, stable links and report-site links handed out before, which keep working and do not expire. " +
		"Set auth.reads: true only if reads should need a token too."
	if c.Auth.Reads {
		reads = "reads need a token (auth.reads is true): the dashboard asks for one, " +
			"and report-site links are signed and expire after content.url_ttl."
	}
	if c.Auth.Token == "" && others == 0 {
		what := "What changes now: this is the first token, so from now on every change needs a token - " +
			"uploads (reportctl upload, reportctl watch, CI jobs, the dashboard), project and report edits, deletes and prune. " +
			"A client that sends none is refused with UnauthorizedError and stops; give it a token " +
			"(reportctl --token or REPORTCTL_TOKEN, the dashboard's \"Enter API token\"). "
		if c.Auth.Reads {
			what = "What changes now: this is the first token, so from now on every request needs a token, " +
				"reads included (auth.reads is true): give every client one (reportctl --token or REPORTCTL_TOKEN, " +
				"the dashboard's \"Enter API token\"). "
		}
		return what + "What does not change: " + reads
	}
	return "What changes now: nothing for anyone else - changes already needed a token (auth.token or another live token); " +
		"this one only adds access for whoever holds it. As before, " + reads
}

// Wrap breaks text into lines of at most width characters at spaces.
func Wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
