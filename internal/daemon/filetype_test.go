package daemon

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// docxRow is a file type that is not public, added the way a new type is
// (docs/architecture.md, "Adding a file type"): one row of the type table,
// nothing else. Word documents go through LibreOffice Writer
// (libreoffice-writer-nogui).
var docxRow = report.TypeInfo{
	Type: "docx", Exts: []string{".docx"},
	MIME:      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	Container: report.ContainerZip, ZipPart: "word/document.xml",
	Engine: report.EngineOffice, Print: report.PrintNone, Label: "DOCX", Name: "Word document",
	Office: report.Office{Filter: "MS Word 2007 XML", Service: "com.sun.star.text.TextDocument", Export: "writer_pdf_Export"},
}

// docxOf is a minimal Word document whose one paragraph is text.
func docxOf(t *testing.T, text string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, part := range []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>` + text + `</w:t></w:r></w:p></w:body></w:document>`},
	} {
		w, err := z.Create(part.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(part.body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTypeRowEndToEnd registers docx as a test-only row of the type table
// and takes a Word document through the real daemon: upload (the content
// rule and the extension check come from the row, and a .docx, a zip, is
// not taken for a site), the download's Content-Type, print options the
// row refuses, and the PDF from real LibreOffice Writer, routed by the
// row's engine and converted with its filters.
func TestTypeRowEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts LibreOffice")
	}
	remove := report.RegisterType(docxRow)
	defer remove()
	s, _ := startServer(t, testConfig(t, t.TempDir()))
	base := "http://" + s.Addr()
	proj := createProject(t, base, "docx")

	doc := docxOf(t, "Quarterly figures from Writer")
	st, rep, e, err := upload(httpClient, base, proj.ID, "docx", "figures.docx", doc)
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload docx: %d %v %v", st, e, err)
	}
	if rep.FileType != "docx" || !strings.HasSuffix(rep.FileName, ".docx") {
		t.Errorf("stored as %q %q, want a docx report", rep.FileType, rep.FileName)
	}

	// The row's content rule: a zip without word/document.xml is refused.
	st, _, e, _ = upload(httpClient, base, proj.ID, "docx", "empty.docx", testfixture.Zip(t, "", map[string]string{"a.txt": "a"}))
	if st == http.StatusCreated || e.Type != "ValidationError" || !strings.Contains(e.Error, "word/document.xml") {
		t.Errorf("zip without word/document.xml: %d %+v, want a ValidationError naming the part", st, e)
	}
	// The extension must agree with the row.
	st, _, e, _ = upload(httpClient, base, proj.ID, "docx", "figures.pdf", doc)
	if st == http.StatusCreated || e.Type != "ValidationError" || !strings.Contains(e.Error, `fileType "docx"`) {
		t.Errorf("docx named .pdf: %d %+v, want a ValidationError", st, e)
	}

	resp, err := httpClient.Get(fmt.Sprintf("%s/api/reports/%d/download", base, rep.ID))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != docxRow.MIME {
		t.Errorf("download: %s, Content-Type %q, want 200 and %q", resp.Status, ct, docxRow.MIME)
	}

	// PrintNone: print options are refused, not ignored.
	resp, err = httpClient.Get(fmt.Sprintf("%s/api/reports/%d/pdf?landscape=true", base, rep.ID))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK || !strings.Contains(string(b), `"type":"ValidationError"`) || !strings.Contains(string(b), "takes none") {
		t.Errorf("pdf?landscape=true of a docx: %s %s, want a ValidationError", resp.Status, b)
	}

	pdf := getBody(t, fmt.Sprintf("%s/api/reports/%d/pdf", base, rep.ID))
	if text := testfixture.PDFText(t, pdf); !strings.Contains(text, "Quarterly figures from Writer") {
		t.Errorf("the PDF's text is %q, want the document's paragraph", text)
	}
}
