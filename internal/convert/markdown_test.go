package convert

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

func TestMarkdownToPDF(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	pdf := convertOK(t, m, jobFor(t, report.MD, fixture(t, "report.md")))
	text := testfixture.PDFText(t, pdf)
	testfixture.WantText(t, text, "Monthly summary", "Figures", "Region", "Revenue", "North", "bold text",
		"Café", "résumé", "你好世界", "hello from a code block", "The footnote text", "collect data")
	if !strings.Contains(strings.ReplaceAll(text, " ", ""), "1/1") {
		t.Error("no page-number footer (1 / 1)")
	}
	for _, raw := range []string{"**", "|---", "--------", "```", "[^1]", "# Monthly", "INJECTED", "- [x]"} {
		if strings.Contains(text, raw) {
			t.Errorf("PDF shows raw Markdown or script output %q:\n%s", raw, text)
		}
	}
	if got := testfixture.PDFInfo(t, pdf)["Title"]; got != "Monthly summary" {
		t.Errorf("PDF title %q, want the first heading", got)
	}
}

// Markdown's page-number footer is a CSS page margin box (markdown.css),
// not Chromium's footer template: every page carries "n / N", and the
// print keeps its outline.
func TestMarkdownFooterOnEveryPage(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	src := "# Long report\n\n" + strings.Repeat("A paragraph of text that goes on and on. ", 700)
	pdf := convertOK(t, m, jobFor(t, report.MD, []byte(src)))
	pages := strings.Split(strings.TrimRight(testfixture.PDFText(t, pdf), "\f"), "\f")
	if len(pages) < 3 {
		t.Fatalf("%d pages, want at least 3", len(pages))
	}
	for i, text := range pages {
		if want := fmt.Sprintf("%d/%d", i+1, len(pages)); !strings.Contains(strings.ReplaceAll(text, " ", ""), want) {
			t.Errorf("page %d lacks the footer %q:\n%s", i+1, want, text)
		}
	}
	if got := testfixture.PDFOutline(t, pdf); len(got) == 0 || got[0] != "Long report" {
		t.Errorf("outline %q, want the heading", got)
	}
}

// goldmark takes more than linear time on deeply nested block quotes
// (">" repeated); the render is killed at the job's deadline, the slot is
// freed, and the next report converts. The error names the setting and the
// input's size. The deadline leaves room for the next job's fresh renderer
// child (a re-exec of the race-enabled test binary) on a loaded machine.
func TestMarkdownPathologyIsBounded(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 10 * time.Second })
	src := bytes.Repeat([]byte(">"), 200_000)
	_, err := m.PDF(testfixture.Ctx(t), jobFor(t, report.MD, src))
	re := testfixture.WantKind(t, err, report.Conversion)
	for _, s := range []string{"too costly to render", "(convert.job_timeout)", "(195.3 KiB)"} {
		if !strings.Contains(re.Message, s) {
			t.Errorf("message %q lacks %q", re.Message, s)
		}
	}
	text := testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.MD, []byte("# After\n\nstill converts"))))
	testfixture.WantText(t, text, "After", "still converts")
}
