package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Merging a site's pages runs in a child that is killed at the deadline
// (the stalled child stands in for PDFs that keep pdfcpu busy), and a part
// that is not a PDF is a Conversion error, not a crash of the daemon.
func TestSiteMergeBounded(t *testing.T) {
	sample := fixture(t, "sample.pdf")
	dir := t.TempDir()
	good := filepath.Join(dir, "a.pdf")
	if err := os.WriteFile(good, sample, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "b.pdf")
	if err := os.WriteFile(bad, []byte("not a pdf"), 0o600); err != nil {
		t.Fatal(err)
	}
	quiet := func(m *Manager) { m.startOnce.Do(func() {}) }

	t.Run("ok", func(t *testing.T) {
		m := newManager(t, nil)
		quiet(m)
		out := filepath.Join(dir, "ok.pdf")
		if err := m.mergeParts([]sitePart{{File: good, Title: "One"}, {File: good, Title: "Two"}}, out); err != nil {
			t.Fatal(err)
		}
		pdf, _ := os.ReadFile(out)
		if got := testfixture.PDFOutline(t, pdf); len(got) != 2 || got[0] != "One" || got[1] != "Two" {
			t.Errorf("outline %q", got)
		}
	})

	t.Run("not a pdf", func(t *testing.T) {
		m := newManager(t, nil)
		quiet(m)
		err := m.mergeParts([]sitePart{{File: good, Title: "One"}, {File: bad, Title: "Bad"}}, filepath.Join(dir, "bad.pdf"))
		testfixture.WantKind(t, err, report.Conversion)
	})

	t.Run("deadline", func(t *testing.T) {
		t.Setenv(mergeChildStall, "1")
		m := newManager(t, func(c *Config) { c.JobTimeout = time.Second })
		quiet(m)
		start := time.Now()
		err := m.mergeParts([]sitePart{{File: good, Title: "One"}}, filepath.Join(dir, "stall.pdf"))
		if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "longer than 1s") {
			t.Errorf("message %q", re.Message)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the stalled merge ended after %s, want about the 1s deadline", d)
		}
	})
}
