package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxDestinationParens is the deepest nesting of parentheses a link
// destination may have, as in cmark. CommonMark lets implementations limit
// it ("at least three levels should be supported").
const maxDestinationParens = 32

// markdownParser is goldmark's default parser with its link parser wrapped
// in cappedLinks.
func markdownParser() parser.Parser {
	inline := parser.DefaultInlineParsers()
	wrapped := false
	for i, v := range inline {
		if v.Value == parser.NewLinkParser() {
			inline[i] = util.Prioritized(cappedLinks{parser.NewLinkParser()}, v.Priority)
			wrapped = true
		}
	}
	if !wrapped {
		panic("convert: goldmark's default inline parsers have no link parser to wrap")
	}
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(inline...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}

// cappedLinks bounds goldmark's scan of a link destination. goldmark
// (v1.8.7, the newest release) scans "](" onwards to the end of the line,
// through any depth of parentheses, or for a pointy destination to the
// next ">" however many "<" come first; "[a](" repeated makes that one scan
// per link, each to the end: quadratic, a minute for 400 KB. cappedLinks
// shows the link parser a line that ends where a destination stops being
// valid (CommonMark: no unescaped "<" in a pointy one; cmark's limit of 32
// nested parentheses in a plain one), so each scan stops there and the
// text stays text, as in cmark.
type cappedLinks struct{ parser.InlineParser }

func (p cappedLinks) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if len(line) > 1 && line[0] == ']' && line[1] == '(' {
		if cut := destinationEnd(line[2:]); cut >= 0 {
			block = &cutReader{Reader: block, cut: seg.Start + 2 + cut}
		}
	}
	return p.InlineParser.Parse(parent, block, pc)
}

// CloseBlock passes the call on: goldmark's link parser is a CloseBlocker.
func (p cappedLinks) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if c, ok := p.InlineParser.(parser.CloseBlocker); ok {
		c.CloseBlock(parent, block, pc)
	}
}

// destinationEnd returns where, in rest (what follows "]("), a link
// destination stops being valid before goldmark's own scan would stop, or
// -1 when goldmark's scan stops first (at a space, a closing parenthesis
// or a ">" of a pointy destination).
func destinationEnd(rest []byte) int {
	i := 0
	for i < len(rest) && util.IsSpace(rest[i]) {
		i++
	}
	if i < len(rest) && rest[i] == '<' {
		for i++; i < len(rest); i++ {
			switch c := rest[i]; {
			case c == '\\' && i+1 < len(rest) && util.IsPunct(rest[i+1]):
				i++
			case c == '>':
				return -1
			case c == '<':
				return i
			}
		}
		return -1
	}
	opened := 0
	for ; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '\\' && i+1 < len(rest) && util.IsPunct(rest[i+1]):
			i++
		case c == '(':
			if opened++; opened > maxDestinationParens {
				return i
			}
		case c == ')':
			if opened--; opened < 0 {
				return -1
			}
		case util.IsSpace(c):
			return -1
		}
	}
	return -1
}

// cutReader is a text.Reader whose line ends at cut (an offset in the
// source) when the current line reaches past it.
type cutReader struct {
	text.Reader
	cut int
}

func (r *cutReader) PeekLine() ([]byte, text.Segment) {
	line, seg := r.Reader.PeekLine()
	if line != nil && seg.Start <= r.cut && r.cut < seg.Stop {
		n := r.cut - seg.Start
		if n <= len(line) {
			return line[:n], seg.WithStop(r.cut)
		}
	}
	return line, seg
}
