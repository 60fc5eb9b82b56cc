// Package gototal computes the total of a `go tool cover -html` page from
// the sources it holds. It is apart from internal/detect so that reportctl,
// which links detect only to name generators, links no Go parser: the
// daemon registers it (detect.RegisterPageTotal).
package gototal

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A `go tool cover -html` page has no total and no statement counts, but it
// holds every file's source in a <pre class="file" id="fileN">, with each
// coverage block of the profile wrapped in
//
//	<span class="covN" title="COUNT">…</span>
//
// (cmd/cover/html.go: '<', '>' and '&' escaped, tabs written as 8 spaces;
// cov0 is a block never run). cmd/cover gives each block the number of
// statements it instruments: every statement of a statement list (a
// block, a case or select clause) belongs to the block its start lies in,
// and an `else if` counts as one statement of a hidden block of its own
// (cmd/cover/cover.go, addCounters and the IfStmt case of Visit).
// PageTotal parses each file's source again with go/parser, counts its
// statements that way, and sums covered over all statements, rounded to
// one decimal as `go tool cover -func` prints the total. Each file's own
// figure must match the percentage the page's file chooser shows for it
// (to its one decimal); any file that does not parse, or does not match,
// gives no total rather than a guess (a label on a statement that is not a
// loop, switch or select, a goto target, is such a case: cmd/cover counts
// the label as a statement outside every block).

var (
	goCoverPre  = regexp.MustCompile(`(?s)<pre class="file" id="(file[0-9]+)"[^>]*>(.*?)</pre>`)
	goCoverOpt  = regexp.MustCompile(`<option value="(file[0-9]+)">.*? \(([0-9]+(?:\.[0-9]+)?)%\)</option>`)
	goCoverSpan = regexp.MustCompile(`^<span class="cov([0-9]+)" title="[0-9]+">`)
)

// coverSpan is one block of a file's source: bytes [start, end) of the
// unescaped text, and whether it ran.
type coverSpan struct {
	start, end int
	covered    bool
}

// PageTotal is the statement coverage of every file of the page, or nil.
func PageTotal(page string) *float64 {
	shown := map[string]float64{}
	for _, m := range goCoverOpt.FindAllStringSubmatch(page, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil
		}
		shown[m[1]] = v
	}
	pres := goCoverPre.FindAllStringSubmatch(page, -1)
	if len(pres) == 0 || len(pres) != len(shown) {
		return nil
	}
	var all, covered int64
	for _, m := range pres {
		want, ok := shown[m[1]]
		if !ok {
			return nil
		}
		src, spans, ok := unescapeCoverSource(m[2])
		if !ok {
			return nil
		}
		n, c, ok := countStatements(src, spans)
		if !ok {
			return nil
		}
		// The page shows each file's figure with one decimal.
		if got := float64(c) * 100 / float64(max(n, 1)); n == 0 || math.Abs(got-want) > 0.05+1e-9 {
			if !(n == 0 && want == 0) {
				return nil
			}
		}
		all += n
		covered += c
	}
	if all == 0 {
		return nil
	}
	pct := float64(covered) * 100 / float64(all)
	pct, _ = strconv.ParseFloat(strconv.FormatFloat(pct, 'f', 1, 64), 64)
	return &pct
}

// unescapeCoverSource turns one file's <pre> content back into source text
// and the blocks' spans within it.
func unescapeCoverSource(s string) (string, []coverSpan, bool) {
	var b strings.Builder
	b.Grow(len(s))
	var spans []coverSpan
	open := -1
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "<span "):
			m := goCoverSpan.FindStringSubmatch(s[i:])
			if m == nil || open >= 0 {
				return "", nil, false
			}
			spans = append(spans, coverSpan{start: b.Len(), covered: m[1] != "0"})
			open = len(spans) - 1
			i += len(m[0])
		case strings.HasPrefix(s[i:], "</span>"):
			if open < 0 {
				return "", nil, false
			}
			spans[open].end = b.Len()
			open = -1
			i += len("</span>")
		case s[i] == '<':
			return "", nil, false
		case s[i] == '&':
			ent := ""
			for _, e := range []string{"&lt;", "&gt;", "&amp;"} {
				if strings.HasPrefix(s[i:], e) {
					ent = e
				}
			}
			if ent == "" {
				return "", nil, false
			}
			b.WriteByte(map[string]byte{"&lt;": '<', "&gt;": '>', "&amp;": '&'}[ent])
			i += len(ent)
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	if open >= 0 {
		return "", nil, false
	}
	return b.String(), spans, true
}

// countStatements counts the statements of src as cmd/cover does, and
// those whose block ran. A statement outside every span belongs to no
// block of the profile and is not counted, as -func does not.
func countStatements(src string, spans []coverSpan) (all, covered int64, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cover.go", src, parser.SkipObjectResolution)
	if err != nil {
		return 0, 0, false
	}
	tf := fset.File(f.Pos())
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	count := func(p token.Pos) {
		off := tf.Offset(p)
		i := sort.Search(len(spans), func(i int) bool { return spans[i].start > off }) - 1
		if i < 0 || off >= spans[i].end {
			return
		}
		all++
		if spans[i].covered {
			covered++
		}
	}
	list := func(stmts []ast.Stmt) {
		for _, s := range stmts {
			switch s.(type) {
			case *ast.CaseClause, *ast.CommClause:
				// A switch or select body: the clauses are no statements;
				// their bodies are lists of their own.
			default:
				count(s.Pos())
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			list(n.List)
		case *ast.CaseClause:
			list(n.Body)
		case *ast.CommClause:
			list(n.Body)
		case *ast.IfStmt:
			if elif, ok := n.Else.(*ast.IfStmt); ok {
				count(elif.Pos())
			}
		}
		return true
	})
	return all, covered, true
}
