package convert

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// tailWindow is how far from the end %%EOF may sit. The PDF spec puts it on
// the last line; readers such as Acrobat tolerate up to 1 KiB of trailing
// garbage, and so do we.
const tailWindow = 1024

var (
	errNotPDF    = errors.New("the file is not a PDF (it does not start with %PDF-)")
	errTruncated = errors.New("the PDF is incomplete (no %%EOF marker at its end)")
)

// checkPDF validates the header and the end of a PDF: enough to refuse a fake
// or truncated upload without parsing the whole document.
func checkPDF(f io.ReaderAt, size int64) error {
	head := make([]byte, 5)
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head, []byte("%PDF-")) {
		return errNotPDF
	}
	n := min(size, tailWindow)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return errTruncated
	}
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return errTruncated
	}
	return nil
}

func checkPDFFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	return checkPDF(f, info.Size())
}
