// Reading PDFs in tests: their text, with poppler's pdftotext, and their
// outline (bookmark titles), with pdfcpu.

package testfixture

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// PDFText is the PDF's text as pdftotext extracts it; the test is skipped
// where poppler-utils is not installed.
func PDFText(t testing.TB, pdf []byte) string {
	t.Helper()
	NeedPoppler(t)
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// NeedPoppler skips the test where poppler-utils is not installed.
func NeedPoppler(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext is not installed (apt-get install poppler-utils)")
	}
}

// PDFInfo is pdfinfo's answer about the PDF, by field ("Pages", "Page
// size", ...).
func PDFInfo(t testing.TB, pdf []byte) map[string]string {
	t.Helper()
	NeedPoppler(t)
	cmd := exec.Command("pdfinfo", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	info := map[string]string{}
	for line := range strings.SplitSeq(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[k] = strings.TrimSpace(v)
		}
	}
	return info
}

// WantText fails the test for each of want that text (a PDF's, PDFText)
// lacks.
func WantText(t testing.TB, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("PDF text lacks %q; text:\n%s", w, text)
		}
	}
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
