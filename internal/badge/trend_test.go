package badge

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
)

// TestTrendSVG: the sparkline parses as XML, has one point per value
// inside the box, an escaped title and desc, and an empty one is a grey
// dashed line.
func TestTrendSVG(t *testing.T) {
	type svg struct {
		Role     string `xml:"role,attr"`
		Title    string `xml:"title"`
		Desc     string `xml:"desc"`
		Polyline *struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Line *struct {
			Dash string `xml:"stroke-dasharray,attr"`
		} `xml:"line"`
	}
	for _, vals := range [][]float64{{80, 82.5, 79, 90}, {5}, {3, 3, 3}} {
		var got svg
		tr := Trend{Title: `lines of <a & "b">`, Desc: "d", Values: vals}
		if err := xml.Unmarshal(tr.SVG(), &got); err != nil {
			t.Fatalf("%v: %v\n%s", vals, err, tr.SVG())
		}
		if got.Role != "img" || got.Title != tr.Title || got.Polyline == nil {
			t.Fatalf("%v: %+v", vals, got)
		}
		pts := strings.Fields(got.Polyline.Points)
		if len(pts) != len(vals) {
			t.Fatalf("%v: points %q", vals, got.Polyline.Points)
		}
		for _, p := range pts {
			var x, y float64
			if _, err := fmtSscanf(p, &x, &y); err != nil || x < 0 || x > TrendWidth || y < 0 || y > TrendHeight {
				t.Fatalf("%v: point %q outside the box", vals, p)
			}
		}
	}
	var empty svg
	if err := xml.Unmarshal(Trend{Title: "none"}.SVG(), &empty); err != nil || empty.Polyline != nil || empty.Line == nil || empty.Line.Dash == "" {
		t.Fatalf("empty trend: %+v %v", empty, err)
	}
}

func fmtSscanf(p string, x, y *float64) (int, error) {
	return fmt.Sscanf(p, "%g,%g", x, y)
}
