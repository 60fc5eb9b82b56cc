package detect

import (
	"bufio"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// `go tool cover -html` (cmd/cover/html.go) writes one page holding every
// source file, with a file chooser whose options carry each file's
// statement coverage:
//
//	<select id="files">
//	<option value="file0">example.com/calc/add.go (75.0%)</option>
//	<option value="file1">example.com/calc/mul.go (57.1%)</option>
//
// and the styles .cov0 … .cov10. The page has no total and no statement
// counts, so the percentages of several files cannot simply be combined:
// the total comes from the sources the page embeds, parsed again and
// their statements counted as cmd/cover does (internal/detect/gototal,
// registered by the daemon: RegisterPageTotal). A site that also holds
// the coverage profile the page was made from (a text file starting
// "mode: set|count|atomic", e.g. coverage.out) gets the total from the
// profile, computed as `go tool cover -func` does (see profileTotal).
var (
	goCoverOption = regexp.MustCompile(`<option value="file[0-9]+">(.*?) \(([0-9]+(?:\.[0-9]+)?)%\)</option>`)
)

func isGoCover(t string) bool {
	return strings.Contains(t, `<select id="files">`) && strings.Contains(t, ".cov0 {") && strings.Contains(t, "Go Coverage Report")
}

// goCoverFiles are the page's files and their coverage, in page order.
func goCoverFiles(t string) (names []string, pcts []*float64) {
	for _, m := range goCoverOption.FindAllStringSubmatch(t, -1) {
		names = append(names, html.UnescapeString(m[1]))
		pcts = append(pcts, percent(m[1:]))
	}
	return names, pcts
}

// pageTotal computes a page's total from the sources it holds: set by
// RegisterPageTotal where figures are wanted (the daemon registers
// internal/detect/gototal); reportctl, which only names generators, leaves
// it unset and so links no Go parser.
var pageTotal = func(string) *float64 { return nil }

// RegisterPageTotal sets how a go cover page's total is computed from the
// sources it holds (gototal.PageTotal). Call it before detection runs.
func RegisterPageTotal(f func(page string) *float64) { pageTotal = f }

// goCover is the page's total: computed from the sources it holds
// (pageTotal), else, for a page of one file, that file's figure.
func goCover(t string) *report.Summary {
	if total := pageTotal(t); total != nil {
		return &report.Summary{Lines: total}
	}
	_, pcts := goCoverFiles(t)
	if len(pcts) != 1 {
		return nil
	}
	return &report.Summary{Lines: pcts[0]}
}

// ProfileLimit bounds how much of a coverage profile is read.
const ProfileLimit = 64 << 20

var profileMode = regexp.MustCompile(`^mode: (set|count|atomic)$`)

// profileTotal reads a Go coverage profile: after "mode: …", lines
//
//	example.com/calc/add.go:3.24,3.40 1 1
//
// (file:startLine.col,endLine.col numStmt count). A block listed more
// than once (profiles of several test runs appended) counts once, covered
// if any run covered it, as cmd/cover merges them. The total is covered
// statements over all statements, rounded to one decimal as
// `go tool cover -func` prints it. files are the profile's file names.
func profileTotal(r io.Reader) (total *float64, files map[string]bool) {
	sc := bufio.NewScanner(io.LimitReader(r, ProfileLimit))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || !profileMode.MatchString(strings.TrimSpace(sc.Text())) {
		return nil, nil
	}
	type block struct {
		stmts   int64
		covered bool
	}
	blocks := map[string]*block{}
	files = map[string]bool{}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if profileMode.MatchString(line) { // merged profiles repeat the header
			continue
		}
		// Split from the right: file names may hold ':' and spaces.
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, nil
		}
		pos := strings.Join(f[:len(f)-2], " ")
		stmts, err1 := strconv.ParseInt(f[len(f)-2], 10, 64)
		count, err2 := strconv.ParseInt(f[len(f)-1], 10, 64)
		colon := strings.LastIndexByte(pos, ':')
		if err1 != nil || err2 != nil || colon <= 0 || stmts < 0 || count < 0 {
			return nil, nil
		}
		files[pos[:colon]] = true
		b := blocks[pos]
		if b == nil {
			b = &block{stmts: stmts}
			blocks[pos] = b
		}
		b.covered = b.covered || count > 0
	}
	if sc.Err() != nil || len(blocks) == 0 {
		return nil, nil
	}
	var all, covered int64
	for _, b := range blocks {
		if all+b.stmts < all { // the sum does not fit
			return nil, nil
		}
		all += b.stmts
		if b.covered {
			covered += b.stmts
		}
	}
	if all == 0 {
		return nil, nil
	}
	pct := float64(covered) * 100 / float64(all)
	pct, _ = strconv.ParseFloat(strconv.FormatFloat(pct, 'f', 1, 64), 64)
	return &pct, files
}
