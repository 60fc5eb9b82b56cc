package sniff

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// A password-protected deck (LibreOffice saved deck.pptx with a password:
// testdata/encrypt-deck.py) is an OLE2 file, not a zip. Named .pptx or
// .ppt, it is refused as password-protected, not as "not a zip archive";
// a plain .ppt (OLE2 without those streams) is still accepted.
func TestCheckEncryptedOOXML(t *testing.T) {
	enc, err := os.ReadFile("../convert/testdata/deck-encrypted.pptx")
	if err != nil {
		t.Fatal(err)
	}
	ppt, err := os.ReadFile("../convert/testdata/deck.ppt")
	if err != nil {
		t.Fatal(err)
	}
	if names := ole2Names(bytes.NewReader(enc), int64(len(enc))); len(names) < 3 {
		t.Fatalf("directory of the encrypted deck: %q", names)
	}
	for _, typ := range []report.FileType{report.PPTX, report.PPT} {
		err := Check(bytes.NewReader(enc), int64(len(enc)), typ)
		var e *Error
		if !errors.As(err, &e) || !e.Encrypted || err.Error() != ErrEncrypted {
			t.Errorf("%s: got %v, want %q", typ, err, ErrEncrypted)
		}
	}
	if err := Check(bytes.NewReader(ppt), int64(len(ppt)), report.PPT); err != nil {
		t.Errorf("plain .ppt refused: %v", err)
	}
	if encryptedOOXML(bytes.NewReader(ppt), int64(len(ppt))) {
		t.Error("plain .ppt seen as encrypted OOXML")
	}
	// Truncated or garbage OLE2 files are not "encrypted"; nothing panics.
	for _, b := range [][]byte{enc[:600], enc[:len(enc)/2], append(append([]byte{}, SigOLE2...), bytes.Repeat([]byte{0xff}, 4096)...)} {
		_ = ole2Names(bytes.NewReader(b), int64(len(b)))
	}
	if err := Check(bytes.NewReader(enc[:600]), 600, report.PPTX); err == nil || err.Error() == ErrEncrypted {
		t.Errorf("truncated encrypted deck: %v, want not a zip archive", err)
	}
}
