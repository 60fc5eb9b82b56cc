// Reading PDFs in tests: their text, with poppler's pdftotext, and their
// outline (bookmark titles), with pdfcpu.

package testfixture

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// PDFText is the PDF's text as pdftotext extracts it; the test is skipped
// where poppler-utils is not installed.
func PDFText(t testing.TB, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext is not installed (apt-get install poppler-utils)")
	}
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// PDFOutline is the titles of the PDF's top-level bookmarks, in order.
func PDFOutline(t testing.TB, pdf []byte) []string {
	t.Helper()
	bms, err := api.Bookmarks(bytes.NewReader(pdf), nil)
	if err != nil {
		t.Fatalf("reading the outline: %v", err)
	}
	var titles []string
	for _, b := range bms {
		titles = append(titles, b.Title)
	}
	return titles
}
