package cli

import (
	"context"
	"net/url"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

// printFlags are the print options of `reportctl reports pdf`, one flag per
// query parameter of GET /api/reports/{id}/pdf. Only flags given are sent,
// so without any the PDF is the default print.
type printFlags struct {
	fs                 *pflag.FlagSet
	paper, margin      string
	pageRanges         string
	landscape, bg      bool
	scale              float64
	selector, exprWait string
	scope              string
}

func (p *printFlags) bind(fs *pflag.FlagSet) {
	p.fs = fs
	fs.StringVar(&p.paper, "paper", "", "paper `SIZE`: A4, Letter, Legal or A3 (wins over the document's CSS @page size)")
	fs.BoolVar(&p.landscape, "landscape", false, "print in landscape orientation")
	fs.StringVar(&p.margin, "margin", "", "page margins, a CSS shorthand of one to four `LENGTHS` such as 10mm or \"1in 0.5in\"")
	fs.StringVar(&p.pageRanges, "page-ranges", "", "print only these `PAGES`, e.g. 1-3,5")
	fs.Float64Var(&p.scale, "scale", 1, "rendering `FACTOR` from 0.1 to 2")
	fs.BoolVar(&p.bg, "print-background", true, "print background colours and images (--print-background=false to leave them out)")
	fs.StringVar(&p.selector, "wait-for-selector", "", "HTML only: print once this CSS `SELECTOR` matches (bounded by the daemon)")
	fs.StringVar(&p.exprWait, "wait-for-expression", "", "HTML only: print once this JavaScript `EXPRESSION` is truthy (bounded by the daemon)")
	fs.StringVar(&p.scope, "scope", "", "HTML only: `entry` (the default: the entry page) or site (every page of a report site reachable from its entry, or every part of a single page such as each file of go tool cover -html, merged with a bookmark per page)")
}

// options checks the flags given, as the daemon would, before any request.
func (p *printFlags) options() (report.PrintOptions, error) {
	q := url.Values{}
	set := func(flag, param, value string) {
		if p.fs.Changed(flag) {
			q.Set(param, value)
		}
	}
	set("paper", "paper", p.paper)
	set("landscape", "landscape", strconv.FormatBool(p.landscape))
	set("margin", "margin", p.margin)
	set("page-ranges", "pageRanges", p.pageRanges)
	set("scale", "scale", strconv.FormatFloat(p.scale, 'f', -1, 64))
	set("print-background", "printBackground", strconv.FormatBool(p.bg))
	set("wait-for-selector", "waitForSelector", p.selector)
	set("wait-for-expression", "waitForExpression", p.exprWait)
	set("scope", "scope", p.scope)
	return report.ParsePrintOptions(q)
}

func (p *printFlags) get(c *client.Client, ctx context.Context, id int64) (*client.Stream, error) {
	opts, err := p.options()
	if err != nil {
		return nil, err
	}
	return c.PrintPDF(ctx, id, opts)
}
