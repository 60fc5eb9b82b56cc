package report

import (
	"strings"
	"testing"
)

// TestTypeTable: every row is complete, the seed rows are the public types
// in order, and a registered row is read by every lookup until removed.
func TestTypeTable(t *testing.T) {
	for i, ti := range Types() {
		if ti.Type != FileTypes[i] {
			t.Fatalf("row %d is %q, want %q (FileTypes' order)", i, ti.Type, FileTypes[i])
		}
		if len(ti.Exts) == 0 || ti.MIME == "" || ti.Engine == "" || ti.Label == "" || ti.Name == "" {
			t.Errorf("row %q is incomplete: %+v", ti.Type, ti)
		}
		if ti.Engine == EngineOffice && (ti.Office.Filter == "" || ti.Office.Service == "" || ti.Office.Export == "") {
			t.Errorf("office row %q lacks its filters: %+v", ti.Type, ti.Office)
		}
		if (ti.Container == ContainerZip) != (ti.ZipPart != "") {
			t.Errorf("row %q: a zip container names its main part, and only it: %+v", ti.Type, ti)
		}
	}
	if got := TypeNames(", ", " or "); got != "html, md, pdf, ppt or pptx" {
		t.Errorf("TypeNames = %q", got)
	}

	row := TypeInfo{Type: "docx", Exts: []string{".docx"}, MIME: "application/x-test", Container: ContainerZip,
		ZipPart: "word/document.xml", Engine: EngineOffice, Print: PrintNone, Label: "DOCX", Name: "Word document"}
	remove := RegisterType(row)
	if got, ok := TypeOfName("Notes.DOCX"); !ok || got != "docx" {
		t.Errorf("TypeOfName(Notes.DOCX) = %q %v", got, ok)
	}
	if got, err := ParseFileType(" DOCX "); err != nil || got != "docx" || got.ContentType() != row.MIME || got.Ext() != ".docx" {
		t.Errorf("ParseFileType(DOCX) = %q %v", got, err)
	}
	if err := (PrintOptions{Landscape: true}).CheckFor("docx"); !IsKind(err, Validation) {
		t.Errorf("a PrintNone row took landscape: %v", err)
	}
	if !strings.Contains(TypeExts(" ", " "), ".docx") || len(FileTypes) != 5 {
		t.Errorf("TypeExts %q, FileTypes %v: the row is listed, the public types unchanged", TypeExts(" ", " "), FileTypes)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("registering docx twice did not panic")
			}
		}()
		RegisterType(row)
	}()
	remove()
	if _, err := ParseFileType("docx"); !IsKind(err, Validation) || !strings.Contains(err.Error(), "html, md, pdf, ppt, pptx") {
		t.Errorf("after remove, ParseFileType(docx) = %v", err)
	}
}
