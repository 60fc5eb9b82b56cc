package detect

import (
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// JaCoCo's index.html (org.jacoco.report HTMLFormatter): a table whose
// header names its columns (Element, Missed Instructions, Cov., Missed
// Branches, Cov., Missed, Cxty, Missed, Lines, …; a column whose total is
// zero is left out) and whose <tfoot> row starts with "Total":
//
//	<tfoot><tr><td>Total</td><td class="bar">12 of 120</td><td class="ctr2">90%</td>…
//	  <td class="ctr1">3</td><td class="ctr2">40</td>…</tr></tfoot>
//
// Line coverage is (Lines − Missed) / Lines from the cells under the
// header "Lines" and the "Missed" before it. Counts use the report's
// locale grouping ("1,234"), which is dropped. The footer says
// "Created with <a href="http://www.jacoco.org/jacoco">JaCoCo</a>".
var (
	tableHead = regexp.MustCompile(`(?s)<thead>(.*?)</thead>`)
	tableFoot = regexp.MustCompile(`(?s)<tfoot>(.*?)</tfoot>`)
	tableCell = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	markup    = regexp.MustCompile(`<[^>]*>`)
)

func isJaCoCo(t string) bool {
	return strings.Contains(t, "www.jacoco.org/jacoco") && strings.Contains(t, `id="coveragetable"`)
}

func jacoco(t string) *report.Summary {
	head, foot := tableHead.FindStringSubmatch(t), tableFoot.FindStringSubmatch(t)
	if head == nil || foot == nil {
		return nil
	}
	heads, totals := cells(head[1]), cells(foot[1])
	if len(heads) != len(totals) || len(totals) == 0 || totals[0] != "Total" {
		return nil
	}
	for i, h := range heads {
		if h != "Lines" || i == 0 || heads[i-1] != "Missed" {
			continue
		}
		missed, ok1 := count(totals[i-1])
		lines, ok2 := count(totals[i])
		if !ok1 || !ok2 || lines == 0 || missed > lines {
			return nil
		}
		pct := float64(lines-missed) * 100 / float64(lines)
		pct = float64(int64(pct*100+0.5)) / 100
		return &report.Summary{Lines: &pct}
	}
	return nil
}

// cells are the texts of a row's <td> cells, markup removed.
func cells(row string) []string {
	var out []string
	for _, m := range tableCell.FindAllStringSubmatch(row, -1) {
		out = append(out, strings.TrimSpace(html.UnescapeString(markup.ReplaceAllString(m[1], ""))))
	}
	return out
}

// count reads a number with any grouping separators.
func count(s string) (int64, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ',' || r == '.' || r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\'':
		default:
			return 0, false
		}
	}
	n, err := strconv.ParseInt(b.String(), 10, 64)
	return n, err == nil
}
