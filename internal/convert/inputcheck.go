package convert

import (
	"errors"
	"io"
	"os"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
)

// The content rules are package sniff's, the same the upload applied, so a
// file that was accepted is one that converts or serves.

// checkPDF validates a PDF's header and trailer window.
func checkPDF(f io.ReaderAt, size int64) error {
	return sniff.Check(f, size, report.PDF)
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

// checkPresentation refuses files that cannot be a deck of the given type
// before LibreOffice sees them: a clean error instead of a worker's time.
func checkPresentation(path string, typ report.FileType) error {
	f, err := os.Open(path)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil {
		err = sniff.Check(f, info.Size(), typ)
	}
	var bad *sniff.Error
	if errors.As(err, &bad) && bad.Encrypted {
		return report.Wrap(report.Conversion, err, "the presentation is password-protected")
	}
	if err != nil {
		return report.Wrap(report.Conversion, err, "the file is not a valid "+string(typ)+" presentation")
	}
	return nil
}
