package engine

import (
	"errors"
	"syscall"

	"github.com/reportd/reportd/internal/report"
)

// DiskErr is the StorageError of a failed write or read of the engines'
// files (the PDF cache, a job's parts): what failed, and for a full disk,
// a quota, an I/O error or a read-only file system, which one. It is never
// a ConversionError, so the failure memory (failures.go) does not keep it:
// once space is freed the next request converts.
func DiskErr(err error, what string) error {
	if cause := diskCause(err); cause != "" {
		what += ": " + cause
	}
	return report.Wrap(report.Storage, err, what)
}

// diskCause names a storage fault under err, or "".
func diskCause(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full (no space left on device)"
	case errors.Is(err, syscall.EDQUOT):
		return "the disk quota is exhausted"
	case errors.Is(err, syscall.EIO):
		return "the disk reported an I/O error"
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only"
	}
	return ""
}

// AsStorage turns an error that some step classed as the document's or the
// engine's, but that a storage fault caused, into a StorageError.
func AsStorage(err error) error {
	if err == nil || report.IsKind(err, report.Storage) || diskCause(err) == "" {
		return err
	}
	return DiskErr(err, "cannot write the PDF cache")
}
