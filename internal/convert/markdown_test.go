package convert

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

func TestMarkdownToPDF(t *testing.T) {
	needChromium(t)
	m := sharedManager(t)
	pdf := convertOK(t, m, jobFor(t, report.MD, fixture(t, "report.md")))
	text := testfixture.PDFText(t, pdf)
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

// Markdown's page-number footer is a CSS page margin box (markdown.css),
// not Chromium's footer template: every page carries "n / N", and the
// print keeps its outline.
func TestMarkdownFooterOnEveryPage(t *testing.T) {
	needChromium(t)
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
	needChromium(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1; c.JobTimeout = 10 * time.Second })
	src := bytes.Repeat([]byte(">"), 200_000)
	_, err := m.PDF(testCtx(t), jobFor(t, report.MD, src))
	re := wantKind(t, err, report.Conversion)
	for _, s := range []string{"too costly to render", "(convert.job_timeout)", "(195.3 KiB)"} {
		if !strings.Contains(re.Message, s) {
			t.Errorf("message %q lacks %q", re.Message, s)
		}
	}
	text := testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.MD, []byte("# After\n\nstill converts"))))
	wantText(t, text, "After", "still converts")
}

// A Markdown render runs in a child process; many in a row reuse it.
func TestMarkdownRendererReusesChild(t *testing.T) {
	p := newMDRenderer(1, 200, quietLog, nil)
	defer p.close()
	pid := 0
	for i := range 3 {
		html, err := p.render(testCtx(t), []byte("# Title\n\ntext"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(html, []byte("<h1 id=\"title\">Title</h1>")) {
			t.Fatalf("render %d: %s", i, html)
		}
		if len(p.warmChildren()) != 1 {
			t.Fatalf("%d idle renderers, want 1", len(p.warmChildren()))
		}
		if got := p.warmChildren()[0].cmd.Process.Pid; pid != 0 && got != pid {
			t.Fatalf("render %d ran in a new child %d, not %d", i, got, pid)
		} else {
			pid = got
		}
	}
}

// A warm child that died while idle is replaced, and the job still renders:
// a dead renderer is not the document's fault.
func TestMarkdownRendererReplacesDeadChild(t *testing.T) {
	p := newMDRenderer(1, 200, quietLog, nil)
	defer p.close()
	p.warm()
	if len(p.warmChildren()) != 1 {
		t.Fatalf("%d idle renderers after warm, want 1", len(p.warmChildren()))
	}
	dead := p.warmChildren()[0].cmd.Process.Pid
	if err := p.warmChildren()[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.warmChildren()[0].done // waited for by the thread that started it (startLocked)
	html, err := p.render(testCtx(t), []byte("# After\n\ntext"), time.Minute)
	if err != nil {
		t.Fatalf("render after the warm child died: %v", err)
	}
	if !bytes.Contains(html, []byte("After</h1>")) {
		t.Fatalf("render: %s", html)
	}
	if len(p.warmChildren()) != 1 || p.warmChildren()[0].cmd.Process.Pid == dead {
		t.Fatalf("the dead child was not replaced by a fresh one")
	}
}

// Markdown that costs a parser more than linear time, in every shape we
// know of, either renders or is cut off at the deadline by killing the
// renderer; none of it outlives the deadline (by more than the kill and
// the answer take), and the next document renders. Runs of unclosed links
// render (markdown_links.go); nested block quotes, deep lists and
// emphasis runs are still slow in goldmark and show the deadline at work.
func TestMarkdownPathologiesAreBounded(t *testing.T) {
	p := newMDRenderer(1, 200, quietLog, nil)
	defer p.close()
	rep := func(s string, n int) []byte { return bytes.Repeat([]byte(s), n) }
	nested := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			b.WriteString(strings.Repeat(" ", 2*i) + "- a\n")
		}
		return b.Bytes()
	}
	const deadline = 3 * time.Second
	const grace = 3 * time.Second // killing the child and answering, on a busy machine
	table := append(append(rep("|a", 20_000), "|\n"...), append(rep("|-", 20_000), "|\n"...)...)
	cutOff := 0
	for name, src := range map[string][]byte{
		"open links":        rep("[a](", 100_000),
		"open pointy links": rep("[a](<", 80_000),
		"open brackets":     rep("[", 200_000),
		"emphasis runs":     rep("*a_", 100_000),
		"nested quotes":     rep(">", 200_000),
		"nested list line":  rep("- ", 100_000),
		"nested list lines": nested(3_000),
		"backtick runs":     rep("`a``", 50_000),
		"raw html":          rep("<a", 100_000),
		"reference defs":    rep("[x]: /u\n[x]\n", 20_000),
		"wide table":        table,
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := p.render(t.Context(), src, deadline)
			if took := time.Since(start); took > deadline+grace {
				t.Fatalf("the render took %s against a deadline of %s", took, deadline)
			}
			if err != nil {
				cutOff++
				re := wantKind(t, err, report.Conversion)
				for _, s := range []string{"too costly to render", "convert.job_timeout", engine.ApproxSize(int64(len(src)))} {
					if !strings.Contains(re.Message, s) {
						t.Errorf("message %q lacks %q", re.Message, s)
					}
				}
			}
			html, err := p.render(t.Context(), []byte("# After"), time.Minute)
			if err != nil || !bytes.Contains(html, []byte("After")) {
				t.Fatalf("the next document: %s %v", html, err)
			}
		})
	}
	if cutOff == 0 {
		t.Error("no input reached the deadline: the deadline went untested (find another slow shape)")
	}
}

// Runs of unclosed links, the shape goldmark scans to the end of the line
// once per link, render in about linear time (markdown_links.go): 400 KB
// well within a generous bound, and as text.
func TestMarkdownOpenLinksRender(t *testing.T) {
	p := newMDRenderer(1, 200, quietLog, nil)
	defer p.close()
	for _, unit := range []string{"[a](", "[a](<", "[a](((("} {
		src := bytes.Repeat([]byte(unit), 400_000/len(unit))
		start := time.Now()
		html, err := p.render(t.Context(), src, time.Minute)
		if err != nil {
			t.Fatalf("%q: %v", unit, err)
		}
		if !bytes.Contains(html, []byte(strings.Repeat(html2text(unit), 10))) {
			t.Errorf("%q: the text is not in the document", unit)
		}
		t.Logf("%d KB of %q: %s", len(src)/1000, unit, time.Since(start))
	}
	// Links that do close keep working, nested parentheses included.
	html, err := p.render(t.Context(), []byte("[a](u(1)) [b](<v w>) [c](x((((y)))))"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`<a href="u(1)">a</a>`, `<a href="v%20w">b</a>`, `<a href="x((((y))))">c</a>`} {
		if !bytes.Contains(html, []byte(s)) {
			t.Errorf("no %s in %s", s, html)
		}
	}
}

func html2text(s string) string { return strings.ReplaceAll(s, "<", "&lt;") }
