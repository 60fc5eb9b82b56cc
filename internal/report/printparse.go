package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// unitInches are the CSS length units a margin may use.
var unitInches = map[string]float64{"in": 1, "cm": 1 / 2.54, "mm": 1 / 25.4, "pt": 1.0 / 72, "px": 1.0 / 96}

// parseMargin reads a CSS margin shorthand: one to four lengths (top,
// right, bottom, left as in CSS), separated by spaces or commas, each with a
// unit (mm, cm, in, pt, px) unless it is 0.
func parseMargin(s string) (*[4]float64, error) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	if len(parts) < 1 || len(parts) > 4 {
		return nil, fmt.Errorf("%q is not one to four lengths such as 10mm or \"1in 0.5in\"", s)
	}
	v := make([]float64, len(parts))
	for i, p := range parts {
		x, err := parseLength(p)
		if err != nil {
			return nil, err
		}
		v[i] = x
	}
	// CSS shorthand: 1 value: all; 2: vertical horizontal; 3: top horizontal bottom.
	var m [4]float64
	switch len(v) {
	case 1:
		m = [4]float64{v[0], v[0], v[0], v[0]}
	case 2:
		m = [4]float64{v[0], v[1], v[0], v[1]}
	case 3:
		m = [4]float64{v[0], v[1], v[2], v[1]}
	case 4:
		m = [4]float64{v[0], v[1], v[2], v[3]}
	}
	return &m, nil
}

func parseLength(p string) (float64, error) {
	if p == "0" {
		return 0, nil
	}
	num := strings.TrimRight(strings.ToLower(p), "abcdefghijklmnopqrstuvwxyz")
	f, ok := unitInches[strings.ToLower(p[len(num):])]
	x, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || x < 0 {
		return 0, fmt.Errorf("%q is not a length such as 10mm, 1cm, 0.5in, 12pt or 20px", p)
	}
	in := x * f
	if in > maxMarginInches {
		return 0, fmt.Errorf("%q is wider than %d inches", p, maxMarginInches)
	}
	// Rounded to a thousandth of an inch, so 25.4mm and 1in are one variant.
	return float64(int64(in*1000+0.5)) / 1000, nil
}

// parsePageRanges reads page ranges such as "1-3,5": pages counted from 1,
// each a number or two joined by a hyphen. The result is sorted and merged,
// so "5,1-3" and "1,2,3,5" name the same pages and the same variant.
func parsePageRanges(s string) (string, error) {
	bad := fmt.Errorf("%q is not page ranges such as 1-3,5 (pages count from 1)", s)
	parts := strings.Split(strings.ReplaceAll(s, " ", ""), ",")
	if len(parts) > maxRanges {
		return "", fmt.Errorf("more than %d ranges", maxRanges)
	}
	var rs [][2]int
	for _, p := range parts {
		lo, hi, isRange := strings.Cut(p, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 1 || b < a || strings.HasPrefix(lo, "+") || strings.HasPrefix(hi, "+") {
			return "", bad
		}
		if b > maxPage {
			return "", fmt.Errorf("page %d is beyond %d", b, maxPage)
		}
		rs = append(rs, [2]int{a, b})
	}
	slices.SortFunc(rs, func(x, y [2]int) int { return x[0] - y[0] })
	var out []string
	for i := 0; i < len(rs); {
		a, b := rs[i][0], rs[i][1]
		for i++; i < len(rs) && rs[i][0] <= b+1; i++ {
			b = max(b, rs[i][1])
		}
		if a == b {
			out = append(out, strconv.Itoa(a))
		} else {
			out = append(out, strconv.Itoa(a)+"-"+strconv.Itoa(b))
		}
	}
	return strings.Join(out, ","), nil
}

// LastPage is the highest page o.PageRanges selects, 0 for every page.
func (o PrintOptions) LastPage() int {
	if o.PageRanges == "" {
		return 0
	}
	last := o.PageRanges[strings.LastIndexAny(o.PageRanges, ",-")+1:]
	n, _ := strconv.Atoi(last)
	return n
}

// CheckFor refuses options that cannot apply to reports of type t, rather
// than ignoring them, by the type's PrintRule: HTML takes every option;
// Markdown every one but the waits (its engine runs no script) and scope;
// PDF only pageRanges; PPT and PPTX none yet. scope=site takes no pageRanges.
func (o PrintOptions) CheckFor(t FileType) error {
	rule := PrintNone
	if ti, ok := Lookup(t); ok {
		rule = ti.Print
	}
	switch {
	case o.Scope != "" && o.PageRanges != "":
		return Errorf(Validation, "pageRanges cannot be combined with scope=site (it would apply to every page of the site)")
	case o.IsZero() || rule == PrintAll:
		return nil
	case o.Scope != "":
		return Errorf(Validation, "scope=site applies to HTML reports only; this %s report is printed whole", t)
	case rule == PrintNoScript:
		if o.WaitForSelector != "" || o.WaitForExpression != "" {
			return Errorf(Validation, "waitForSelector and waitForExpression apply to HTML reports only: Markdown runs no script")
		}
		return nil
	case rule == PrintPageRanges:
		if rest := o; rest.PageRanges != "" {
			rest.PageRanges = ""
			if rest.IsZero() {
				return nil
			}
		}
		return Errorf(Validation, "a %s report takes only the print option pageRanges (%s)", t, o.Key())
	}
	return Errorf(Validation, "print options apply to HTML and Markdown reports; this %s report takes none (%s)", t, o.Key())
}

// parseScope reads scope: "entry" (the default, normalized to "") or "site".
func parseScope(s string) (string, error) {
	switch strings.ToLower(s) {
	case "entry":
		return "", nil
	case ScopeSite:
		return ScopeSite, nil
	}
	return "", fmt.Errorf("%q is not a scope (entry or site)", s)
}
