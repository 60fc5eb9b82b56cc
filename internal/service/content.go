package service

import (
	"archive/zip"
	"bytes"
	"io"

	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// checkDeep looks past the signature where a signature alone is easy to
// fake: a PPTX must be a zip holding a presentation, and a PDF must end
// with its trailer (a truncated upload does not).
func checkDeep(s *files.Staged, t report.FileType) error {
	switch t {
	case report.PPTX:
		f, err := s.Open()
		if err != nil {
			return report.Wrap(report.Storage, err, "cannot read the upload")
		}
		defer f.Close()
		zr, err := zip.NewReader(f, s.Size)
		if err != nil {
			return report.Errorf(report.Validation, "file content is not a PPTX (corrupt zip archive)")
		}
		for _, zf := range zr.File {
			if zf.Name == "ppt/presentation.xml" {
				return nil
			}
		}
		return report.Errorf(report.Validation, "file content is not a PPTX (no ppt/presentation.xml in the archive)")
	case report.PDF:
		f, err := s.Open()
		if err != nil {
			return report.Wrap(report.Storage, err, "cannot read the upload")
		}
		defer f.Close()
		n := int64(2048)
		if s.Size < n {
			n = s.Size
		}
		tail := make([]byte, n)
		if _, err := f.ReadAt(tail, s.Size-n); err != nil && err != io.EOF {
			return report.Wrap(report.Storage, err, "cannot read the upload")
		}
		if !bytes.Contains(tail, []byte("%%EOF")) {
			return report.Errorf(report.Validation, "file content is not a complete PDF (no %%%%EOF trailer)")
		}
	}
	return nil
}
