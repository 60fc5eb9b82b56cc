package httpapi

import (
	"bufio"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/report"
)

const (
	maxFieldBytes = 64 << 10
	bodyBufSize   = 64 << 10
)

type bufferedBody struct {
	io.Reader
	io.Closer
}

// multipartReader streams a multipart body (never ParseMultipartForm into
// RAM) and cuts the body off past limit.
func multipartReader(w http.ResponseWriter, r *http.Request, limit int64) (*multipart.Reader, error) {
	if !isMultipart(r) {
		return nil, report.Errorf(report.Validation, "request must be multipart/form-data")
	}
	if limit > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	// multipart reads its source 4 KiB at a time; a larger buffer in
	// between turns a big upload's quarter of a million read(2)s per GiB
	// into a few thousand.
	r.Body = bufferedBody{bufio.NewReaderSize(r.Body, bodyBufSize), r.Body}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, report.Errorf(report.Validation, "bad multipart body: %v", err)
	}
	return mr, nil
}

func multipartError(err error) error {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return report.Errorf(report.PayloadTooLarge, "request body exceeds the limit of %d bytes", big.Limit)
	}
	var rerr *report.Error
	if errors.As(err, &rerr) {
		return err
	}
	return report.Errorf(report.Validation, "bad multipart body: %v", err)
}

func readField(p *multipart.Part, name string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, maxFieldBytes+1))
	if err != nil {
		return "", multipartError(err)
	}
	if len(b) > maxFieldBytes {
		return "", report.Errorf(report.Validation, "%s is longer than %d bytes", name, maxFieldBytes)
	}
	if !utf8.Valid(b) {
		return "", report.Errorf(report.Validation, "%s is not valid UTF-8", name)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
