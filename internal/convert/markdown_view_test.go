package convert

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/markdown"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// The dashboard's view is the document the PDF prints: same renderer,
// same stylesheet, rendered in the bounded child.
func TestMarkdownHTMLIsThePDFsDocument(t *testing.T) {
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 2 * time.Minute })
	src := []byte("# Notes\n\nSee [the log][log].\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[log]: https://example.com/log\n")
	got, err := m.MarkdownHTML(testfixture.Ctx(t), jobFor(t, report.MD, src))
	if err != nil {
		t.Fatal(err)
	}
	want, err := markdown.Render(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("view differs from the PDF's document:\n%s", got)
	}
	for _, s := range []string{`<a href="https://example.com/log">the log</a>`, "<td>2</td>", markdown.CSS} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("view lacks %.60q", s)
		}
	}

	_, err = m.MarkdownHTML(testfixture.Ctx(t), jobFor(t, report.HTML, []byte("<p>x</p>")))
	testfixture.WantKind(t, err, report.Validation)
}

// A document too costly to render is cut off at the job timeout, like a
// PDF job, and the next one renders.
func TestMarkdownHTMLStopsAtTheJobTimeout(t *testing.T) {
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 3 * time.Second })
	_, err := m.MarkdownHTML(testfixture.Ctx(t), jobFor(t, report.MD, bytes.Repeat([]byte(">"), 200_000)))
	if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "too costly to render") {
		t.Errorf("message %q", re.Message)
	}
	m.cfg.JobTimeout = 2 * time.Minute // the next render is not about the deadline
	if _, err := m.MarkdownHTML(testfixture.Ctx(t), jobFor(t, report.MD, []byte("# After"))); err != nil {
		t.Errorf("the next render: %v", err)
	}
}
