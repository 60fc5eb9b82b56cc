package convert

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
	"github.com/reportd/reportd/internal/testfixture"
)

// Presentations through the Manager: the content check (checkPresentation)
// before LibreOffice, the engine's install message, the PDF. The engine's
// own tests (workers, faults, lanes, defusing, sandbox) are convert/office's.

func TestPresentationToPDF(t *testing.T) {
	testfixture.NeedOffice(t)
	m := sharedManager(t)
	for _, typ := range []report.FileType{report.PPTX, report.PPT} {
		t.Run(string(typ), func(t *testing.T) {
			pdf := convertOK(t, m, jobFor(t, typ, fixture(t, "deck."+string(typ))))
			if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
				t.Errorf("pages %q, want 3, one per slide", pages)
			}
			testfixture.WantText(t, testfixture.PDFText(t, pdf), "Slide one", "Café résumé", "你好", "Slide three", "谢谢")
		})
	}
}

func TestPresentationBrokenOrFake(t *testing.T) {
	testfixture.NeedOffice(t)
	m := sharedManager(t)
	deck := fixture(t, "deck.pptx")
	cases := []struct {
		name    string
		typ     report.FileType
		content []byte
	}{
		{"pptx text", report.PPTX, []byte("just some text, named .pptx")},
		{"pptx truncated", report.PPTX, deck[:len(deck)/2]},
		{"pptx other zip", report.PPTX, testfixture.Zip(t, "", map[string]string{"hello.txt": "hi"})},
		// Passes the quick check, so LibreOffice itself must refuse it.
		{"pptx garbage parts", report.PPTX, testfixture.Zip(t, "", map[string]string{
			"[Content_Types].xml": "<nonsense", "ppt/presentation.xml": "<<<not xml"})},
		{"ppt text", report.PPT, []byte("plain text named .ppt")},
		{"ppt ole2 garbage", report.PPT, append(append([]byte{}, sniff.SigOLE2...), bytes.Repeat([]byte{7}, 4096)...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.PDF(testfixture.Ctx(t), jobFor(t, c.typ, c.content))
			testfixture.WantKind(t, err, report.Conversion)
		})
	}
	// The worker survived all of that.
	convertOK(t, m, jobFor(t, report.PPTX, deck))
}

func TestOfficeMissing(t *testing.T) {
	m := newManager(t, func(c *Config) { c.SofficePath = "/nonexistent/soffice" })
	_, err := m.PDF(testfixture.Ctx(t), jobFor(t, report.PPTX, fixture(t, "deck.pptx")))
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, "install libreoffice-impress-nogui") {
		t.Errorf("message %q does not name the package", re.Message)
	}
}

// A password-protected .pptx (testdata/deck-encrypted.pptx, saved by
// LibreOffice with a password) that reached storage anyway (stored before
// the upload check knew it, or named .ppt) is answered "password-protected"
// before any worker is used.
func TestOfficeEncryptedOOXMLIsNamed(t *testing.T) {
	testfixture.NeedOffice(t)
	m := newManager(t, nil)
	enc := fixture(t, "deck-encrypted.pptx")
	for _, typ := range []report.FileType{report.PPTX, report.PPT} {
		_, err := m.PDF(testfixture.Ctx(t), jobFor(t, typ, enc))
		if re := testfixture.WantKind(t, err, report.Conversion); re.Message != "the presentation is password-protected" {
			t.Errorf("%s: message %q, want the presentation is password-protected", typ, re.Message)
		}
	}
	if n := m.office.Done(); n != 0 {
		t.Errorf("%d conversions ran, want none", n)
	}
}
