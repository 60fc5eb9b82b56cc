// Package testfixture holds small valid files for tests (PNG, PDF, PPTX,
// PPT header). It imports nothing of reportd, so any package's tests can
// use it, internal/daemon's included (which cannot import internal/apitest:
// apitest imports daemon).
package testfixture

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
)

// MinimalPDF is a small valid one-page PDF with the text "Hello PDF".
func MinimalPDF() []byte {
	return []byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n" +
		"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
		"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj\n" +
		"4 0 obj<</Length 44>>stream\nBT /F1 24 Tf 20 100 Td (Hello PDF) Tj ET\nendstream endobj\n" +
		"5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj\n" +
		"trailer<</Root 1 0 R>>\n%%EOF\n")
}

// FakePPTX is a zip that has the parts a PPTX names; enough to pass the
// upload's content check (it is not a renderable deck).
func FakePPTX() []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"[Content_Types].xml", "ppt/presentation.xml"} {
		w, _ := zw.Create(name)
		w.Write([]byte("<x/>"))
	}
	zw.Close()
	return buf.Bytes()
}

// PNG is a valid 1×1 PNG.
func PNG() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	return b
}

// OLE2 is the start of a compound file (what .ppt files are).
func OLE2() []byte {
	return append([]byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"), make([]byte, 504)...)
}
