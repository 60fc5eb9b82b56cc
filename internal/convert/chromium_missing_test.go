package convert

import (
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Chromium missing: both of its types fail with an error naming the package,
// and the Manager remembers no failure (engine/fault.go).
func TestChromiumMissing(t *testing.T) {
	m := newManager(t, func(c *Config) { c.ChromiumPath = "/nonexistent/chromium" })
	for _, typ := range []report.FileType{report.HTML, report.MD} {
		_, err := m.PDF(testfixture.Ctx(t), jobFor(t, typ, []byte("hello")))
		re := testfixture.WantKind(t, err, report.Conversion)
		if !strings.Contains(re.Message, "install chromium-headless-shell") {
			t.Errorf("%s: message %q does not name the package", typ, re.Message)
		}
	}
	// The engine's fault, not the document's: nothing is remembered, so the
	// report converts as soon as Chromium is installed.
	if n := len(m.fails.m); n != 0 {
		t.Errorf("%d failures remembered, want 0", n)
	}
}
