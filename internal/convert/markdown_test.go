package convert

import (
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

func TestRenderMarkdownDropsRawHTML(t *testing.T) {
	out, err := renderMarkdown(fixture(t, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	for _, bad := range []string{"<script", "INJECTED", "onclick"} {
		if strings.Contains(html, bad) {
			t.Errorf("rendered HTML contains %q", bad)
		}
	}
	for _, want := range []string{
		`<h2 id="figures">`, // auto heading ids
		"<table>", `<input checked="" disabled="" type="checkbox"`, "<del>struck</del>",
		`<a href="https://example.org">`, `class="footnotes"`,
		"<title>Monthly summary</title>",
		`<span style="color:`, // chroma highlighting
	} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered HTML lacks %q", want)
		}
	}
	unsafe, _ := renderMarkdown([]byte("[x](javascript:alert(1))"))
	if strings.Contains(string(unsafe), "javascript:") {
		t.Error("a javascript: link survived")
	}
}

func TestMarkdownToPDF(t *testing.T) {
	needChromium(t)
	m := sharedManager(t)
	pdf := convertOK(t, m, jobFor(t, report.MD, fixture(t, "report.md")))
	text := pdfText(t, pdf)
	wantText(t, text, "Monthly summary", "Figures", "Region", "Revenue", "North", "bold text",
		"Café résumé", "你好世界", "hello from a code block", "The footnote text", "collect data")
	if !strings.Contains(strings.ReplaceAll(text, " ", ""), "1/1") {
		t.Error("no page-number footer (1 / 1)")
	}
	for _, raw := range []string{"**", "|---", "--------", "```", "[^1]", "# Monthly", "INJECTED", "- [x]"} {
		if strings.Contains(text, raw) {
			t.Errorf("PDF shows raw Markdown or script output %q:\n%s", raw, text)
		}
	}
	if got := pdfInfo(t, pdf)["Title"]; got != "Monthly summary" {
		t.Errorf("PDF title %q, want the first heading", got)
	}
}
