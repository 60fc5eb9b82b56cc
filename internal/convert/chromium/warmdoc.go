package chromium

import (
	"strings"
	"sync"

	"github.com/reportd/reportd/internal/convert/markdown"
)

// warmDoc is what a spare page holds, on its own origin, until its job
// writes over it. A job's renderer is fresh (one browser context and
// renderer per job), and a fresh renderer pays once for what it lays out
// and paints first: the font look-ups (fontconfig, over IPC to the
// browser), each face's tables, CJK line breaking, the glyphs rastered at
// each size, form controls, tables. Laid out and painted here, while the
// page is made ahead of its job, those costs are gone from the job: with
// this document a first Markdown PDF's load took 13.6-17 ms against 25-35 ms
// with a three-line Latin one, HTML's 14-17 against 18-23 (BENCHMARKS.md,
// "2026-11-29 (later)"). It costs each waiting page ~3.7 MiB more
// (convert/spares.go counts it).
//
// So it is a rendered Markdown report (the stylesheet, headings, a table,
// a task list, highlighted code, a footnote; CJK in each font stack),
// followed by CJK in the generic families HTML reports fall back to. It
// holds no script. The sample is ours and fixed: rendering it here is not
// the rendering of a user's Markdown, which only the render children do
// (markdown/pool.go). No emoji: Noto Color Emoji would cost every page
// its ~10 MB of bitmaps, whether or not its job needs them.
func warmDoc() []byte {
	warmOnce.Do(func() {
		doc, err := markdown.Render([]byte(warmSample))
		if err != nil { // a fixed sample: cannot fail but for a bug
			panic("chromium: the warm document does not render: " + err.Error())
		}
		warmBytes = []byte(strings.Replace(string(doc), "</main>", "</main>"+warmGeneric, 1))
	})
	return warmBytes
}

var (
	warmOnce  sync.Once
	warmBytes []byte
)

const warmSample = "# Warm 你好\n\nText **bold 你好** _italic_ ~~struck~~ [link](#a) `code 你好`, https://example.org.\n\n" +
	"## Table 表\n\n| Name 名 | Value |\n|---|--:|\n| 一 | 1 |\n| two | 2 |\n\n- [x] done 完成\n- [ ] open\n\n" +
	"```go\nfunc main() { fmt.Println(\"你好\") } // 注释\n```\n\nA note.[^1]\n\n[^1]: The note 注.\n"

const warmGeneric = `<p style="font-family:serif">Warm 你好 <b>你好</b> <i>i</i></p>` +
	`<p style="font-family:sans-serif">Warm 你好 <b>你好</b> <i>i</i></p>` +
	`<p style="font-family:monospace">Warm 你好 <b>你好</b></p>`
