package s3store

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/minio/minio-go/v7"

	"github.com/reportd/reportd/internal/report"
)

// errUnavailable is what a request hears while the bucket cannot be
// reached: a ServiceUnavailableError (503 with Retry-After in the
// conventional status mode), never a StorageError.
const errUnavailable = "the file store (S3 bucket) is unavailable; try again shortly"

// Unreachable reports whether err says the S3 server could not be reached
// or is failing: no connection, a dropped or timed-out one, or a 5xx answer
// (InternalError, ServiceUnavailable, SlowDown). Answers about the request
// or the credentials (4xx) are not outages.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if r := minio.ToErrorResponse(err); r.StatusCode != 0 {
		return r.StatusCode >= 500 || r.StatusCode == http.StatusTooManyRequests
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// outageErr is the ServiceUnavailableError of an unreachable bucket, or
// nil when err is something else.
func outageErr(err error, key string) error {
	if !Unreachable(err) {
		return nil
	}
	return report.Wrap(report.Unavailable, fmt.Errorf("s3 %s: %w", key, err), errUnavailable)
}
