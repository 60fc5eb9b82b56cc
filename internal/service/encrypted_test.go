package service

import (
	"bytes"
	"os"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// An encrypted .pptx is refused at upload with a ValidationError that says
// it is password-protected.
func TestUploadEncryptedDeck(t *testing.T) {
	enc, err := os.ReadFile("../convert/testdata/deck-encrypted.pptx")
	if err != nil {
		t.Fatal(err)
	}
	err = checkContent(bytes.NewReader(enc), int64(len(enc)), report.PPTX, nil)
	if !report.IsKind(err, report.Validation) || report.MessageOf(err) != "the presentation is password-protected (encrypted)" {
		t.Errorf("got %v, want ValidationError: the presentation is password-protected (encrypted)", err)
	}
}
