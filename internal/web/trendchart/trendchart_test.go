package trendchart_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/web/trendchart"
)

func ptr[T any](v T) *T { return &v }

// elements parses svg and returns every element's name and attributes.
func elements(t *testing.T, svg []byte) []xml.StartElement {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var out []xml.StartElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			out = append(out, se)
		}
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestChart(t *testing.T) {
	main := "main"
	var pts []report.HistoryPoint
	for i := range 5 {
		c := strings.Repeat(string(rune('a'+i)), 40)
		pts = append(pts, report.HistoryPoint{
			ReportID: int64(10 + i), Branch: &main, Commit: &c,
			UploadTime: report.LocalTime{Time: time.Date(2026, 11, 20+i, 10, 0, 0, 0, time.UTC)},
			Summary:    &report.Summary{Lines: ptr(80 - float64(i)), Passed: ptr[int64](int64(10 - i%2)), Failed: ptr[int64](int64(i % 2)), Skipped: ptr[int64](1)},
		})
	}
	pts[3].Flaky = []report.TestRef{{ID: "a", Title: "flips <a>"}, {ID: "b", Title: "b"}, {ID: "c", Title: "c"}, {ID: "d", Title: "d"}}
	svg := trendchart.Render(pts, trendchart.Options{ID: "c1", Title: "coverage on main & <co>"})
	if !bytes.Contains(svg, []byte("4 flaky (flips &lt;a&gt;; b; c; …)")) || bytes.Count(svg, []byte(" flaky (")) != 2 { // aria-label and title of build 4
		t.Errorf("flaky tests of build 4 not in its label:\n%s", svg)
	}
	els := elements(t, svg)
	root := els[0]
	if root.Name.Local != "svg" || attr(root, "role") != "group" || attr(root, "aria-labelledby") != "c1-title c1-desc" {
		t.Errorf("root %+v", root)
	}
	var links, bars, dots int
	for _, e := range els {
		switch {
		case e.Name.Local == "a":
			links++
			l := attr(e, "aria-label")
			if attr(e, "href") == "" || !strings.Contains(l, "commit ") || !strings.Contains(l, "coverage ") || !strings.Contains(l, "on main") {
				t.Errorf("point %+v", e)
			}
		case e.Name.Local == "rect" && strings.HasPrefix(attr(e, "class"), "trend-") && attr(e, "class") != "trend-hit":
			bars++
		case e.Name.Local == "circle":
			dots++
		}
	}
	// 5 builds: a link and a coverage dot each; failed only on the odd ones.
	if links != 5 || dots != 5 || bars != 5*2+2 {
		t.Errorf("%d links, %d dots, %d bar segments", links, dots, bars)
	}
	if !bytes.Contains(svg, []byte(`href="#/reports/14"`)) || !bytes.Contains(svg, []byte("<title id=\"c1-title\">coverage on main &amp; &lt;co&gt;</title>")) {
		t.Errorf("svg:\n%s", svg)
	}
	if !bytes.Contains(svg, []byte("5 builds, oldest first. First: coverage 80%")) {
		t.Errorf("desc:\n%s", svg)
	}
}

func TestEmptyChart(t *testing.T) {
	svg := trendchart.Render(nil, trendchart.Options{Title: "e2e"})
	elements(t, svg)
	if !bytes.Contains(svg, []byte("No reports yet")) || bytes.Contains(svg, []byte("<a ")) {
		t.Errorf("empty:\n%s", svg)
	}
}
