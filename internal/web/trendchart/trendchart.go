// Package trendchart draws a report identity's history as an SVG made on
// the server: stacked bars of passed, failed and skipped tests and a line
// of line coverage, one build per column. Nothing is vendored and nothing
// is fetched: the SVG is complete in itself and works offline.
//
// Accessibility: the root is a group labelled by its <title> and <desc>
// (the desc says what the chart shows, first and last figures included).
// Every build is a link (<a href>, so Tab reaches it and Enter opens the
// report) with an aria-label naming the build, commit, time and figures,
// and a <title> the browser shows on hover. The root is not role="img":
// that would hide the focusable builds from screen readers.
package trendchart

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Options shape a chart.
type Options struct {
	ID    string // prefix of the ids in the SVG, unique on the page (letters, digits, -)
	Title string // e.g. "coverage on main"
	// Link is the address a build opens (default "#/reports/ID").
	Link func(reportID int64) string
	// Build names a build for people (default: its build id, else "report ID").
	Build func(p report.HistoryPoint) string
}

// Geometry, in SVG user units; the SVG scales to its container.
const (
	width   = 640
	height  = 220
	left    = 44 // room for the count axis
	right   = 44 // room for the coverage axis
	top     = 12
	bottom  = 28
	plotW   = width - left - right
	plotH   = height - top - bottom
	maxBarW = 28
)

// Colours (presentation attributes: the dashboard's CSP allows no style
// attributes); the classes let app.css restyle them for dark mode.
const (
	colPassed  = "#146c3a"
	colFailed  = "#b42318"
	colSkipped = "#8a94a6"
	colLine    = "#1d4ed8"
	colAxis    = "#4f5b6d"
	colGrid    = "#d3d9e3"
)

// Render draws points (oldest first).
func Render(points []report.HistoryPoint, o Options) []byte {
	if o.ID == "" {
		o.ID = "trend"
	}
	if o.Link == nil {
		o.Link = func(id int64) string { return "#/reports/" + strconv.FormatInt(id, 10) }
	}
	if o.Build == nil {
		o.Build = defaultBuild
	}
	var b bytes.Buffer
	esc := html.EscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" class="trend-chart" role="group" aria-labelledby="%s-title %s-desc">`, width, height, o.ID, o.ID)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, o.ID, esc(o.Title), o.ID, esc(describe(points)))

	maxTests := int64(0)
	hasTests, hasCov := false, false
	for _, p := range points {
		if s := p.Summary; s != nil {
			if t := total(s); t > 0 || s.Passed != nil || s.Failed != nil {
				hasTests = true
				maxTests = max(maxTests, t)
			}
			hasCov = hasCov || s.Lines != nil
		}
	}
	// Grid and axes.
	b.WriteString(`<g class="trend-axes" aria-hidden="true" font-family="sans-serif" font-size="11">`)
	for i := 0; i <= 4; i++ {
		y := top + plotH - float64(plotH)*float64(i)/4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="%s" stroke-width="1" class="trend-gridline"/>`, left, left+plotW, f(y), f(y), colGrid)
		if hasTests {
			fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end" fill="%s">%d</text>`, left-6, f(y+4), colAxis, int64(math.Round(float64(niceMax(maxTests))*float64(i)/4)))
		}
		if hasCov {
			fmt.Fprintf(&b, `<text x="%d" y="%s" fill="%s">%d%%</text>`, left+plotW+6, f(y+4), colAxis, i*25)
		}
	}
	b.WriteString(`</g>`)
	if len(points) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-family="sans-serif" font-size="13" fill="%s">No reports yet</text></svg>`, width/2, height/2, colAxis)
		return b.Bytes()
	}

	step := float64(plotW) / float64(len(points))
	barW := math.Min(maxBarW, step*0.6)
	scale := float64(plotH) / float64(niceMax(maxTests))
	var line []string
	for i, p := range points {
		x := left + step*float64(i) + step/2
		fmt.Fprintf(&b, `<a href="%s" class="trend-point" aria-label="%s">`, esc(o.Link(p.ReportID)), esc(label(p, o.Build)))
		fmt.Fprintf(&b, `<title>%s</title>`, esc(label(p, o.Build)))
		// A transparent column: the whole height is the hover and click target.
		fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="%d" fill="transparent" class="trend-hit"/>`, f(x-step/2), top, f(step), plotH)
		if s := p.Summary; s != nil && hasTests {
			y := float64(top + plotH)
			for _, seg := range []struct {
				n   *int64
				col string
				cls string
			}{{s.Passed, colPassed, "passed"}, {s.Failed, colFailed, "failed"}, {s.Skipped, colSkipped, "skipped"}} {
				if seg.n == nil || *seg.n <= 0 {
					continue
				}
				h := float64(*seg.n) * scale
				y -= h
				fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" class="trend-%s"/>`, f(x-barW/2), f(y), f(barW), f(h), seg.col, seg.cls)
			}
		}
		if s := p.Summary; s != nil && s.Lines != nil {
			y := top + plotH - *s.Lines/100*plotH
			line = append(line, f(x)+","+f(y))
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="%s" class="trend-coverage-point"/>`, f(x), f(y), colLine)
		}
		b.WriteString(`</a>`)
	}
	if len(line) > 1 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2" class="trend-coverage" aria-hidden="true"/>`, strings.Join(line, " "), colLine)
	}
	b.WriteString(`</svg>`)
	return b.Bytes()
}

// label is one build for people: "Build #12, commit 0123abcd, 2026-01-02
// 03:04, coverage 81%, 10 passed, 1 failed".
func label(p report.HistoryPoint, build func(report.HistoryPoint) string) string {
	parts := []string{build(p)}
	if p.Commit != nil && *p.Commit != "" {
		c := *p.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, "commit "+c)
	}
	if p.Branch != nil && *p.Branch != "" {
		parts = append(parts, "on "+*p.Branch)
	}
	if !p.UploadTime.IsZero() {
		parts = append(parts, p.UploadTime.Format("2006-01-02 15:04"))
	}
	if s := figures(p.Summary); s != "" {
		parts = append(parts, s)
	}
	if f := flakyLabel(p.Flaky); f != "" {
		parts = append(parts, f)
	}
	return strings.Join(parts, ", ")
}

// flakyMaxTitles bounds how many flaky tests a build's label names.
const flakyMaxTitles = 3

// flakyLabel says which tests the flaky rule marks at a build: their
// count and the first flakyMaxTitles titles; "" when none.
func flakyLabel(refs []report.TestRef) string {
	if len(refs) == 0 {
		return ""
	}
	var titles []string
	for i, r := range refs {
		if i == flakyMaxTitles {
			titles = append(titles, "…")
			break
		}
		titles = append(titles, r.Title)
	}
	return fmt.Sprintf("%d flaky (%s)", len(refs), strings.Join(titles, "; "))
}

func defaultBuild(p report.HistoryPoint) string {
	return "Report " + strconv.FormatInt(p.ReportID, 10)
}

func figures(s *report.Summary) string {
	if s.Empty() {
		return "no figures"
	}
	var parts []string
	if s.Lines != nil {
		parts = append(parts, "coverage "+pct(*s.Lines))
	}
	for _, c := range []struct {
		n    *int64
		word string
	}{{s.Passed, "passed"}, {s.Failed, "failed"}, {s.Skipped, "skipped"}, {s.Flaky, "flaky"}} {
		if c.n != nil {
			parts = append(parts, fmt.Sprintf("%d %s", *c.n, c.word))
		}
	}
	return strings.Join(parts, ", ")
}

// describe is the chart's desc: how many builds, and the first and last
// figures.
func describe(points []report.HistoryPoint) string {
	switch len(points) {
	case 0:
		return "No reports yet."
	case 1:
		return "1 build: " + figures(points[0].Summary) + "."
	}
	first, last := points[0], points[len(points)-1]
	return fmt.Sprintf("%d builds, oldest first. First: %s. Latest: %s.", len(points), figures(first.Summary), figures(last.Summary))
}

func total(s *report.Summary) int64 {
	var t int64
	for _, n := range []*int64{s.Passed, s.Failed, s.Skipped} {
		if n != nil {
			t += *n
		}
	}
	return t
}

// niceMax rounds the largest count up to a multiple of 4 (four grid
// steps of whole tests), at least 4.
func niceMax(n int64) int64 {
	if n <= 4 {
		return 4
	}
	return (n + 3) / 4 * 4
}

func pct(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + "%"
}

func f(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }
