package report

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// PrintOptions are the optional query parameters of GET /api/reports/{id}/pdf.
// ParsePrintOptions normalizes them, so equal requests have equal values
// and one Key; the zero value is the default print.
type PrintOptions struct {
	Paper             string      // "", "A4", "Letter", "Legal" or "A3"
	Landscape         bool        //
	Margin            *[4]float64 // inches: top, right, bottom, left; nil: the type's default
	PageRanges        string      // normalized, e.g. "1-3,5"; "": every page
	Scale             float64     // 0: 1
	NoBackground      bool        // printBackground=false (the default prints backgrounds)
	WaitForSelector   string      // HTML only: print once this CSS selector matches
	WaitForExpression string      // HTML only: print once this JavaScript expression is truthy
	Scope             string      // HTML only: "" (the entry page, scope=entry) or ScopeSite
}

// ScopeSite prints every page of a site reachable from its entry, and every
// part of a page that shows one part at a time (go tool cover -html),
// merged into one PDF with a bookmark per page or part.
const ScopeSite = "site"

// PrintParams lists the accepted query parameters. A new option is one more
// field, one entry here, a case in set and in Key, and its use in
// internal/convert/chromium/printoptions.go; CheckFor says which types take it.
// (Every pane of a go tool cover -html report is printed without an option:
// internal/convert/chromium/chromium_panes.go.)
var PrintParams = []string{"paper", "landscape", "margin", "pageRanges", "scale", "printBackground", "waitForSelector", "waitForExpression", "scope"}

// Papers lists the accepted paper sizes with their width and height in inches.
var Papers = map[string][2]float64{"A4": {8.27, 11.69}, "Letter": {8.5, 11}, "Legal": {8.5, 14}, "A3": {11.69, 16.54}}

const (
	maxMarginInches = 5
	maxWaitLen      = 2048
	maxRanges       = 64
	maxPage         = 100000
)

// IsZero reports whether o asks for the default print.
func (o PrintOptions) IsZero() bool { return o == PrintOptions{} }

// Key is the canonical query string of o, "" for the default print. Equal
// options have equal keys; it names the cached variant.
func (o PrintOptions) Key() string {
	v := url.Values{}
	if o.Paper != "" {
		v.Set("paper", o.Paper)
	}
	if o.Landscape {
		v.Set("landscape", "true")
	}
	if o.Margin != nil {
		m := make([]string, 4)
		for i, x := range o.Margin {
			m[i] = strconv.FormatFloat(x, 'f', -1, 64) + "in"
		}
		v.Set("margin", strings.Join(m, " "))
	}
	if o.PageRanges != "" {
		v.Set("pageRanges", o.PageRanges)
	}
	if o.Scale != 0 {
		v.Set("scale", strconv.FormatFloat(o.Scale, 'f', -1, 64))
	}
	if o.NoBackground {
		v.Set("printBackground", "false")
	}
	if o.WaitForSelector != "" {
		v.Set("waitForSelector", o.WaitForSelector)
	}
	if o.WaitForExpression != "" {
		v.Set("waitForExpression", o.WaitForExpression)
	}
	if o.Scope != "" {
		v.Set("scope", o.Scope)
	}
	return v.Encode()
}

// ParsePrintOptions reads the print parameters from q; other parameters are
// left to the caller. A bad value is a Validation error naming it.
func ParsePrintOptions(q url.Values) (PrintOptions, error) {
	var o PrintOptions
	for _, name := range PrintParams {
		vals, ok := q[name]
		if !ok {
			continue
		}
		if len(vals) != 1 {
			return o, Errorf(Validation, "%s may be given once", name)
		}
		if err := o.set(name, strings.TrimSpace(vals[0])); err != nil {
			return PrintOptions{}, Errorf(Validation, "%s: %v", name, err)
		}
	}
	return o, nil
}

func (o *PrintOptions) set(name, s string) error {
	var err error
	switch name {
	case "paper":
		o.Paper, err = parsePaper(s)
	case "landscape":
		o.Landscape, err = parseBool(s)
	case "margin":
		o.Margin, err = parseMargin(s)
	case "pageRanges":
		o.PageRanges, err = parsePageRanges(s)
	case "scale":
		o.Scale, err = parseScale(s)
	case "printBackground":
		var b bool
		b, err = parseBool(s)
		o.NoBackground = !b
	case "waitForSelector":
		o.WaitForSelector, err = parseWait(s)
	case "waitForExpression":
		o.WaitForExpression, err = parseWait(s)
	case "scope":
		o.Scope, err = parseScope(s)
	}
	return err
}

func parsePaper(s string) (string, error) {
	for p := range Papers {
		if strings.EqualFold(s, p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not a paper size (A4, Letter, Legal, A3)", s)
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}

func parseScale(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0.1 && f <= 2) {
		return 0, fmt.Errorf("%q is not a number from 0.1 to 2", s)
	}
	if f == 1 {
		return 0, nil
	}
	return f, nil
}

func parseWait(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("must not be empty")
	}
	if len(s) > maxWaitLen {
		return "", fmt.Errorf("longer than %d bytes", maxWaitLen)
	}
	return s, nil
}
