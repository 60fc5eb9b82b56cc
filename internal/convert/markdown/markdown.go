// Package markdown renders GitHub-flavoured Markdown reports to the HTML
// document Chromium prints. Render runs inside the renderer children (the
// daemon's pool of them is pool.go's Pool), never in the daemon itself: some
// inputs take quadratic time and a render cannot be stopped half way.
package markdown

import (
	"bytes"
	_ "embed"
	"html"
	"strings"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// CSS is the print stylesheet Markdown reports are wrapped in.
//
//go:embed markdown.css
var CSS string

// md renders GitHub-flavoured Markdown. Raw HTML is not passed through:
// goldmark without html.WithUnsafe() replaces it with a comment and drops
// javascript: links, so an uploaded .md cannot run script in the browser.
var md = goldmark.New(
	goldmark.WithParser(markdownParser()), // linear on "[a](" runs (links.go)
	goldmark.WithExtensions(
		extension.GFM, // tables, task lists, strikethrough, autolinks
		extension.Footnote,
		highlighting.NewHighlighting(
			highlighting.WithStyle("github"),
			highlighting.WithFormatOptions(chromahtml.WithLineNumbers(false)),
		),
	),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

// Render returns a complete HTML document for src, styled for print.
func Render(src []byte) ([]byte, error) {
	doc := md.Parser().Parse(text.NewReader(src))
	var body bytes.Buffer
	if err := md.Renderer().Render(&body, src, doc); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(body.Len() + len(CSS) + 256)
	out.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	out.WriteString(html.EscapeString(title(doc, src)))
	out.WriteString("</title><style>\n")
	out.WriteString(CSS)
	out.WriteString("</style></head><body><main class=\"report\">\n")
	out.Write(body.Bytes())
	out.WriteString("</main></body></html>\n")
	return out.Bytes(), nil
}

// title is the text of the first heading, which becomes the PDF's title.
func title(doc ast.Node, src []byte) string {
	var t string
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			var b strings.Builder
			for c := h.FirstChild(); c != nil; c = c.NextSibling() {
				if tx, ok := c.(*ast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
			t = b.String()
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if t == "" {
		return "Report"
	}
	return t
}
