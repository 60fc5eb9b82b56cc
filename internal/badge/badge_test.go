package badge

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// texts parses svg as XML (failing on anything malformed) and returns the
// character data of its <text> and <title> elements and the root's width.
func texts(t *testing.T, svg []byte) (out []string, width string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var in string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, width
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			in = v.Name.Local
			if in == "svg" {
				for _, a := range v.Attr {
					if a.Name.Local == "width" {
						width = a.Value
					}
				}
			}
		case xml.CharData:
			if in == "text" || in == "title" {
				out = append(out, string(v))
			}
		case xml.EndElement:
			in = ""
		}
	}
}

func TestSVGParsesAndEscapes(t *testing.T) {
	b := Badge{Label: `a<b>&"c'`, Message: "报告 ✓ \x01 ok", Color: `red"/><script>`}
	svg := b.SVG()
	got, _ := texts(t, svg)
	want := []string{`a<b>&"c': 报告 ✓ ` + "\uFFFD" + ` ok`, `a<b>&"c'`, `a<b>&"c'`, "报告 ✓ \uFFFD ok", "报告 ✓ \uFFFD ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("texts %q, want %q", got, want)
	}
	if bytes.Contains(svg, []byte("<script")) {
		t.Fatalf("a colour reached the SVG unescaped: %s", svg)
	}
	if !bytes.Contains(svg, []byte(`fill="#9f9f9f"`)) {
		t.Fatalf("an unknown colour is not lightgrey: %s", svg)
	}
}

func TestWidths(t *testing.T) {
	// shields.io's own badge "build | passing" is 88 px wide (37 + 51);
	// the estimate may be off by a pixel or two per part, no more.
	_, w := texts(t, Badge{Label: "build", Message: "passing", Color: "brightgreen"}.SVG())
	if n, err := strconv.Atoi(w); err != nil || n < 86 || n > 92 {
		t.Fatalf("build|passing is %s px wide, shields draws 88", w)
	}
	if textWidth("iiii") >= textWidth("WWWW") || textWidth("报告") <= textWidth("ab") {
		t.Fatal("widths do not follow the characters")
	}
}

func TestHeadline(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	at := report.LocalTime{Time: now.Add(-3 * 24 * time.Hour)}
	for _, c := range []struct {
		s                     *report.Summary
		label, message, color string
	}{
		{&report.Summary{Lines: f(87.456)}, "coverage", "87.46%", "brightgreen"},
		{&report.Summary{Lines: f(80)}, "coverage", "80%", "brightgreen"},
		{&report.Summary{Lines: f(79.9)}, "coverage", "79.9%", "yellow"},
		{&report.Summary{Lines: f(49)}, "coverage", "49%", "red"},
		{&report.Summary{Passed: i(5), Failed: i(2), Skipped: i(1)}, "tests", "5 passed, 2 failed, 1 skipped", "red"},
		{&report.Summary{Passed: i(5), Failed: i(0)}, "tests", "5 passed", "brightgreen"},
		{&report.Summary{Passed: i(5), Failed: i(0), Flaky: i(0)}, "tests", "5 passed", "brightgreen"},
		{&report.Summary{Passed: i(5), Failed: i(0), Flaky: i(2)}, "tests", "5 passed, 2 flaky", "yellow"},
		{&report.Summary{Passed: i(4), Failed: i(2), Skipped: i(1), Flaky: i(1)}, "tests", "4 passed, 2 failed, 1 skipped, 1 flaky", "red"},
		{nil, "e2e", "3 days ago", "blue"},
	} {
		b := For(report.Report{Name: "e2e", UploadTime: at, Summary: c.s}, now, DefaultThresholds, "")
		if b.Label != c.label || b.Message != c.message || b.Color != c.color {
			t.Errorf("%+v: %+v, want %s|%s|%s", c.s, b, c.label, c.message, c.color)
		}
	}
	if b := For(report.Report{Name: "x", UploadTime: at}, now, DefaultThresholds, "nightly"); b.Label != "nightly" {
		t.Errorf("label override: %+v", b)
	}
	if b := For(report.Report{Summary: &report.Summary{Lines: f(60)}}, now, Thresholds{Red: 70, Yellow: 90}, ""); b.Color != "red" {
		t.Errorf("thresholds not applied: %+v", b)
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		10 * time.Second:    "just now",
		time.Minute:         "1 minute ago",
		59 * time.Minute:    "59 minutes ago",
		30 * time.Hour:      "30 hours ago",
		50 * time.Hour:      "2 days ago",
		90 * 24 * time.Hour: "2026-08-26",
		-5 * time.Minute:    "just now",
	} {
		if got := Age(now.Add(-d), now); got != want {
			t.Errorf("%v ago: %q, want %q", d, got, want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(Missing("", "no report").Endpoint(), &got); err != nil {
		t.Fatal(err)
	}
	if got["schemaVersion"] != 1.0 || got["label"] != "report" || got["message"] != "no report" || got["color"] != "lightgrey" || got["isError"] != true {
		t.Fatalf("endpoint JSON %v", got)
	}
}
