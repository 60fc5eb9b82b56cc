package convert

import (
	"archive/zip"
	"bytes"
	"io"
	"os"

	"github.com/reportd/reportd/internal/report"
)

var ole2Magic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// checkPresentation refuses files that cannot be a deck of the given type
// before LibreOffice sees them: a clean error instead of a worker's time.
func checkPresentation(path string, typ report.FileType) error {
	bad := func(err error) error {
		return report.Wrap(report.Conversion, err, "the file is not a valid "+string(typ)+" presentation")
	}
	f, err := os.Open(path)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	defer f.Close()
	if typ == report.PPT {
		head := make([]byte, len(ole2Magic))
		if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, ole2Magic) {
			return bad(err)
		}
		return nil
	}
	info, err := f.Stat()
	if err != nil {
		return bad(err)
	}
	z, err := zip.NewReader(f, info.Size())
	if err != nil {
		return bad(err)
	}
	for _, e := range z.File {
		if e.Name == "ppt/presentation.xml" {
			return nil
		}
	}
	return bad(nil)
}
