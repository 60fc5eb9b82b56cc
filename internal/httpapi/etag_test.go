package httpapi

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// A converted PDF's ETag follows the engines' generation: after a re-render
// (new rendering code, an isolation fix), a client holding the old tag must
// not get 304, nor splice a range of the new bytes onto the old through
// If-Range. A stored PDF served as is keeps its tag.
func TestPDFETagFollowsEngineGeneration(t *testing.T) {
	html := report.ReportRecord{Report: report.Report{FileType: report.HTML}, SHA256: "aa11bb22cc33dd44ee55ff6600778899aa11bb22cc33dd44ee55ff6600778899"}
	scaled := report.PrintOptions{Scale: 0.5}
	for _, opts := range []report.PrintOptions{{}, scaled} {
		a, b := pdfETag(html, opts, "0a1b2c3d"), pdfETag(html, opts, "4e5f6a7b")
		if a == b {
			t.Errorf("opts %+v: ETag %s unchanged when the generation changed", opts, a)
		}
		if a != pdfETag(html, opts, "0a1b2c3d") {
			t.Errorf("opts %+v: ETag not stable for one generation", opts)
		}
	}
	if pdfETag(html, report.PrintOptions{}, "0a1b2c3d") == pdfETag(html, scaled, "0a1b2c3d") {
		t.Error("default and scaled print share an ETag")
	}
	stored := html
	stored.FileType = report.PDF
	if pdfETag(stored, report.PrintOptions{}, "0a1b2c3d") != pdfETag(stored, report.PrintOptions{}, "4e5f6a7b") {
		t.Error("a stored PDF served as is changed its ETag with the engines' generation")
	}
	trimmed := report.PrintOptions{PageRanges: "1"}
	if pdfETag(stored, trimmed, "0a1b2c3d") == pdfETag(stored, trimmed, "4e5f6a7b") {
		t.Error("a stored PDF trimmed by the engines kept its ETag across generations")
	}
}
