package service

import (
	"errors"
	"io"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
)

// checkContent is the content rule of an upload and of a type change
// alike (package sniff has the rules): bytes that cannot be of type t are
// a ValidationError. scan, when not nil, saw the bytes as they were staged
// and spares the text rule a second read.
func checkContent(r io.ReaderAt, size int64, t report.FileType, scan *sniff.Scan) error {
	var err error
	if scan != nil {
		err = sniff.CheckScanned(r, scan, t)
	} else {
		err = sniff.Check(r, size, t)
	}
	var bad *sniff.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return report.Errorf(report.Validation, "%s", bad.Error())
	}
	return report.Wrap(report.Storage, err, "cannot read the file")
}
