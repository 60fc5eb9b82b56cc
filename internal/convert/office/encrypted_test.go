package office

import (
	"os"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// An encrypted binary .ppt is refused by LibreOffice with its own error
// (ERRCODE_SVX_READ_FILTER_PPOINT), which the helper names. LibreOffice here
// cannot write one and no fixture is committed; REPORTD_TEST_ENCRYPTED_PPT
// names such a file (e.g. Apache POI's test-data/slideshow/
// Password_Protected-hello.ppt) to run this test.
func TestOfficeEncryptedPPTIsNamed(t *testing.T) {
	testfixture.NeedOffice(t)
	path := os.Getenv("REPORTD_TEST_ENCRYPTED_PPT")
	if path == "" {
		t.Skip("set REPORTD_TEST_ENCRYPTED_PPT to a password-protected PowerPoint 97-2003 file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, nil)
	_, err = deckPDF(t, e, report.PPT, b)
	if re := testfixture.WantKind(t, err, report.Conversion); re.Message != "the presentation is password-protected" {
		t.Errorf("message %q (%v), want the presentation is password-protected", re.Message, err)
	}
	if n := e.main.restarts.Load(); n != 0 {
		t.Errorf("restarts = %d, want 0", n)
	}
}

// PowerPoint 95 / 4.0 decks are OLE2 files that the "MS PowerPoint 97"
// filter refuses; LibreOffice's type detection picks its "PowerPoint 3"
// filter (libmwaw) for them. The deck is built by ppt95Deck; the control
// shows that without the fallback the same deck is refused as damaged.
func TestOfficePowerPoint95(t *testing.T) {
	testfixture.NeedOffice(t)
	testfixture.NeedPoppler(t)
	deck := ppt95Deck("Old deck from PowerPoint 95")
	e := newEngine(t, nil)
	pdf := convertOK(t, e, report.PPT, deck)
	info := testfixture.PDFInfo(t, pdf)
	if info["Pages"] != "1" || info["Page size"] != "576 x 432 pts" || info["Title"] != "Old deck from PowerPoint 95" {
		t.Errorf("pages %q, page size %q, title %q; want the deck's 1 page of 8 x 6 in and its title",
			info["Pages"], info["Page size"], info["Title"])
	}
	if n := e.main.restarts.Load(); n != 0 {
		t.Errorf("restarts = %d, want 0", n)
	}

	// The control: the "MS PowerPoint 97" filter alone cannot read it.
	officeNoDetect.Store(true)
	defer officeNoDetect.Store(false)
	_, err := deckPDF(t, e, report.PPT, append(deck, 0))
	if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "damaged") {
		t.Errorf("without type detection: %v, want the deck refused as damaged", err)
	}

	// A genuine PowerPoint 95 file, when one is at hand (e.g. Apache POI's
	// test-data/slideshow/PPT95.ppt; none is committed).
	if path := os.Getenv("REPORTD_TEST_PPT95"); path != "" {
		officeNoDetect.Store(false)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pdf := convertOK(t, e, report.PPT, b)
		t.Logf("%s: pages %s, text %.120q", path, testfixture.PDFInfo(t, pdf)["Pages"], testfixture.PDFText(t, pdf))
	}
}

// A password-protected binary .ppt (encryptedPPT: deck.ppt laid out as
// PowerPoint lays out an encrypted deck) is named as such by LibreOffice's
// own error, and the worker is kept; the same rebuild without the marks
// converts, so the rebuild itself is sound.
func TestOfficeEncryptedPPTLayoutIsNamed(t *testing.T) {
	testfixture.NeedOffice(t)
	testfixture.NeedPoppler(t)
	e := newEngine(t, nil)
	pdf := convertOK(t, e, report.PPT, encryptedPPT(t, false))
	if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
		t.Errorf("control: pages %q, want 3", pages)
	}
	_, err := deckPDF(t, e, report.PPT, encryptedPPT(t, true))
	if re := testfixture.WantKind(t, err, report.Conversion); re.Message != "the presentation is password-protected" {
		t.Errorf("message %q (%v), want the presentation is password-protected", re.Message, err)
	}
	if n := e.main.restarts.Load(); n != 0 {
		t.Errorf("restarts = %d, want 0", n)
	}
}
