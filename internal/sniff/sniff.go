package sniff

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/reportd/reportd/internal/report"
)

// TrailerWindow is how far from the end a PDF's %%EOF may sit. The PDF spec
// puts it on the last line; readers such as Acrobat tolerate up to 1 KiB of
// trailing garbage, and so do we, at upload and when serving alike.
const TrailerWindow = 1024

// Signatures of the binary types.
var (
	SigPDF  = []byte("%PDF-")
	SigZip  = []byte("PK\x03\x04")
	SigOLE2 = []byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")
)

// Error says why bytes cannot be of a type, as a sentence a client can
// read ("file content is not a PDF (no %PDF- header)"). Callers give it
// their own error kind.
type Error struct {
	Type   report.FileType
	Reason string
	// Encrypted: the file is a password-protected (encrypted) Office
	// document, which nothing here can open without its password.
	Encrypted bool
}

// ErrEncrypted is the message of an Error with Encrypted set.
const ErrEncrypted = "the presentation is password-protected (encrypted)"

func (e *Error) Error() string {
	if e.Encrypted {
		return ErrEncrypted
	}
	if e.Type == "" {
		return "file " + e.Reason
	}
	return fmt.Sprintf("file content is not %s (%s)", what(e.Type), e.Reason)
}

func what(t report.FileType) string {
	if ti, ok := report.Lookup(t); ok && !ti.Text {
		return "a " + ti.Label
	}
	return "text"
}

// ErrRead wraps a failure to read the bytes at all (the caller's storage
// problem, not the content's).
var ErrRead = errors.New("cannot read the file")

// Check refuses content that cannot be of type t. r holds size bytes.
// For text types every byte is read once, in small pieces.
func Check(r io.ReaderAt, size int64, t report.FileType) error {
	return check(r, size, t, nil)
}

// CheckScanned is Check for bytes a Scan watched as they were written: the
// text rule uses what the scan saw instead of reading the file again.
func CheckScanned(r io.ReaderAt, s *Scan, t report.FileType) error {
	return check(r, s.Size(), t, s)
}

func check(r io.ReaderAt, size int64, t report.FileType, s *Scan) error {
	if size == 0 {
		return &Error{Reason: "is empty"}
	}
	ti, ok := report.Lookup(t)
	switch {
	case !ok:
	case ti.Text:
		if s == nil {
			var err error
			if s, err = scanAll(r, size); err != nil {
				return err
			}
		}
		if at, ok := s.FirstNUL(); ok {
			return &Error{Type: t, Reason: fmt.Sprintf("it contains NUL bytes, the first at offset %d", at)}
		}
		return nil
	case ti.Engine == report.EnginePassthroughPDF:
		return checkPDF(r, size)
	case ti.Container == report.ContainerZip:
		return checkZipPart(r, size, t, ti.ZipPart)
	case ti.Container == report.ContainerOLE2:
		if ok, err := hasPrefix(r, SigOLE2); err != nil || !ok {
			return orRead(err, &Error{Type: t, Reason: "not an OLE2 compound file"})
		}
		if encryptedOOXML(r, size) { // an encrypted Open XML file named as a legacy one
			return &Error{Type: t, Encrypted: true}
		}
		return nil
	}
	return &Error{Type: t, Reason: "unknown file type"}
}

func checkPDF(r io.ReaderAt, size int64) error {
	if ok, err := hasPrefix(r, SigPDF); err != nil || !ok {
		return orRead(err, &Error{Type: report.PDF, Reason: "no %PDF- header"})
	}
	n := min(size, TrailerWindow)
	tail := make([]byte, n)
	if _, err := r.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return fmt.Errorf("%w: %w", ErrRead, err)
	}
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return &Error{Type: report.PDF, Reason: fmt.Sprintf("incomplete: no %%%%EOF in its last %d bytes", TrailerWindow)}
	}
	return nil
}

// checkZipPart is the rule of an Open XML type: a zip archive holding
// part (ppt/presentation.xml for PPTX).
func checkZipPart(r io.ReaderAt, size int64, t report.FileType, part string) error {
	if ok, err := hasPrefix(r, SigZip); err != nil || !ok {
		// A password-protected Open XML file is an OLE2 file holding the
		// encrypted package: say so, not "not a zip archive".
		if ole, _ := hasPrefix(r, SigOLE2); ole && encryptedOOXML(r, size) {
			return &Error{Type: t, Encrypted: true}
		}
		return orRead(err, &Error{Type: t, Reason: "not a zip archive"})
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return &Error{Type: t, Reason: "corrupt zip archive"}
	}
	for _, f := range zr.File {
		if f.Name == part {
			return nil
		}
	}
	return &Error{Type: t, Reason: "no " + part + " in the archive"}
}

func hasPrefix(r io.ReaderAt, sig []byte) (bool, error) {
	head := make([]byte, len(sig))
	n, err := r.ReadAt(head, 0)
	if n < len(sig) {
		if err != nil && err != io.EOF {
			return false, err
		}
		return false, nil
	}
	return bytes.Equal(head, sig), nil
}

func orRead(err error, bad *Error) error {
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRead, err)
	}
	return bad
}
