package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestMarkdownRenderer runs static/js/markdown.js in the browser on inputs
// chosen for their edge cases and for script injection, and compares the
// HTML it builds.
func TestMarkdownRenderer(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + "/"))
	b.waitText("main", "No projects yet")

	tests := []struct{ name, md, want string }{
		{"heading and paragraph", "# Title\n\nSome *em* and **strong** and ~~gone~~.",
			`<h1 id="md-title">Title</h1><p>Some <em>em</em> and <strong>strong</strong> and <del>gone</del>.</p>`},
		{"setext and duplicate slugs", "Intro\n===\n\n## Intro",
			`<h1 id="md-intro">Intro</h1><h2 id="md-intro-1">Intro</h2>`},
		{"raw html is text", `<img src=x onerror="alert(1)"><script>alert(2)</script>`,
			`<p>&lt;img src=x onerror="alert(1)"&gt;&lt;script&gt;alert(2)&lt;/script&gt;</p>`},
		{"javascript link is not a link", "[click](javascript:alert(1))",
			`<p><span class="md-link-blocked" title="javascript:alert(1)">click</span></p>`},
		{"http link", `[docs](https://example.com/a_(b) "T")`,
			`<p><a href="https://example.com/a_(b)" title="T" rel="noopener noreferrer" target="_blank">docs</a></p>`},
		{"in-page anchor", "[up](#title)", `<p><a href="#title">up</a></p>`},
		{"remote image blocked", "![chart](https://evil.example/x.png)",
			`<p><span class="md-img-blocked">[image: chart]</span></p>`},
		{"data image kept", "![dot](data:image/png;base64,AAAA)",
			`<p><img src="data:image/png;base64,AAAA" alt="dot" loading="lazy"></p>`},
		{"autolink", "<https://example.com>",
			`<p><a href="https://example.com" rel="noopener noreferrer" target="_blank">https://example.com</a></p>`},
		{"code span keeps markup", "use `<b>*x*</b>` here",
			`<p>use <code>&lt;b&gt;*x*&lt;/b&gt;</code> here</p>`},
		{"double backtick span", "`` a`b ``", "<p><code>a`b</code></p>"},
		{"escapes", `\*not em\* and snake_case_name`, `<p>*not em* and snake_case_name</p>`},
		{"fenced code", "```go\nfmt.Println(\"<hi>\")\n```",
			`<pre><code class="language-go">fmt.Println("&lt;hi&gt;")</code></pre>`},
		{"indented code", "    x := 1\n    y := 2", "<pre><code>x := 1\ny := 2</code></pre>"},
		{"nested list", "- a\n  - b\n  - c\n- d",
			`<ul><li>a<ul><li>b</li><li>c</li></ul></li><li>d</li></ul>`},
		{"ordered from 3", "3. x\n4. y", `<ol start="3"><li>x</li><li>y</li></ol>`},
		{"loose list keeps paragraphs", "- a\n\n- b", `<ul><li><p>a</p></li><li><p>b</p></li></ul>`},
		{"task list", "- [x] done\n- [ ] todo",
			`<ul><li class="task"><input type="checkbox" disabled="" aria-label="done"> done</li><li class="task"><input type="checkbox" disabled="" aria-label="not done"> todo</li></ul>`},
		{"blockquote", "> quoted *text*\n> more", "<blockquote><p>quoted <em>text</em>\nmore</p></blockquote>"},
		{"table with alignment and escaped pipe", "| a | b |\n|:--|--:|\n| x \\| y | `p|q` |",
			`<div class="table-wrap"><table><thead><tr><th class="align-left">a</th><th class="align-right">b</th></tr></thead><tbody><tr><td class="align-left">x | y</td><td class="align-right"><code>p|q</code></td></tr></tbody></table></div>`},
		{"hard break", "line one  \nline two", "<p>line one<br>line two</p>"},
		{"rule", "a\n\n---\n\nb", "<p>a</p><hr><p>b</p>"},
		{"unclosed emphasis stays text", "2 * 3 = 6 and a_b", "<p>2 * 3 = 6 and a_b</p>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eval[string](b, `(async () => {
				const { renderMarkdown } = await import('/js/markdown.js');
				const div = document.createElement('div');
				div.append(renderMarkdown(`+jsString(tt.md)+`));
				return div.innerHTML;
			})()`)
			if got != tt.want {
				t.Errorf("markdown %q\n got: %s\nwant: %s", tt.md, got, tt.want)
			}
		})
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems: %v", p)
	}
}
