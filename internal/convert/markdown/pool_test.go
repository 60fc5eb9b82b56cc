package markdown

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// The pool's tests start real renderer children (this test binary, re-run
// as ChildName: TestMain in child_test.go calls reexec.Init).

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// A Markdown render runs in a child process; many in a row reuse it.
func TestMarkdownRendererReusesChild(t *testing.T) {
	p := NewPool(1, 200, quietLog, nil)
	defer p.Close()
	pid := 0
	for i := range 3 {
		html, err := p.Render(testfixture.Ctx(t), []byte("# Title\n\ntext"), time.Minute)
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
	p := NewPool(1, 200, quietLog, nil)
	defer p.Close()
	p.Warm()
	if len(p.warmChildren()) != 1 {
		t.Fatalf("%d idle renderers after warm, want 1", len(p.warmChildren()))
	}
	dead := p.warmChildren()[0].cmd.Process.Pid
	if err := p.warmChildren()[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.warmChildren()[0].done // waited for by the thread that started it (startLocked)
	html, err := p.Render(testfixture.Ctx(t), []byte("# After\n\ntext"), time.Minute)
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
// render (links.go); nested block quotes, deep lists and
// emphasis runs are still slow in goldmark and show the deadline at work.
func TestMarkdownPathologiesAreBounded(t *testing.T) {
	p := NewPool(1, 200, quietLog, nil)
	defer p.Close()
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
			_, err := p.Render(t.Context(), src, deadline)
			if took := time.Since(start); took > deadline+grace {
				t.Fatalf("the render took %s against a deadline of %s", took, deadline)
			}
			if err != nil {
				cutOff++
				re := testfixture.WantKind(t, err, report.Conversion)
				for _, s := range []string{"too costly to render", "convert.job_timeout", engine.ApproxSize(int64(len(src)))} {
					if !strings.Contains(re.Message, s) {
						t.Errorf("message %q lacks %q", re.Message, s)
					}
				}
			}
			html, err := p.Render(t.Context(), []byte("# After"), time.Minute)
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
// once per link, render in about linear time (links.go): 400 KB
// well within a generous bound, and as text.
func TestMarkdownOpenLinksRender(t *testing.T) {
	p := NewPool(1, 200, quietLog, nil)
	defer p.Close()
	for _, unit := range []string{"[a](", "[a](<", "[a](((("} {
		src := bytes.Repeat([]byte(unit), 400_000/len(unit))
		start := time.Now()
		html, err := p.Render(t.Context(), src, time.Minute)
		if err != nil {
			t.Fatalf("%q: %v", unit, err)
		}
		if !bytes.Contains(html, []byte(strings.Repeat(html2text(unit), 10))) {
			t.Errorf("%q: the text is not in the document", unit)
		}
		t.Logf("%d KB of %q: %s", len(src)/1000, unit, time.Since(start))
	}
	// Links that do close keep working, nested parentheses included.
	html, err := p.Render(t.Context(), []byte("[a](u(1)) [b](<v w>) [c](x((((y)))))"), time.Minute)
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
