package httpapi

import (
	"fmt"
	"net/http"

	"github.com/reportd/reportd/internal/report"
)

// envelopeAllowance is the room an upload's body has beyond
// max_upload_bytes: the other parts, the boundaries and part headers.
const envelopeAllowance = 1 << 20

// uploadBodyLimit is the most bytes an upload's body may have (0: no limit).
func uploadBodyLimit(maxUpload int64) int64 {
	if maxUpload <= 0 {
		return 0
	}
	return maxUpload + envelopeAllowance
}

// refuseAnnounced refuses an upload whose Content-Length already says it
// is too large, before a byte of the body is read: a 2.5 GB upload is
// refused at once instead of after streaming up to the limit. (Go's server
// sends no 100 Continue for a body the handler never reads, so a client
// that waits for it sends nothing.) Bodies of unknown length are cut off
// while they stream (multipartReader).
func refuseAnnounced(r *http.Request, maxUpload int64) error {
	limit := uploadBodyLimit(maxUpload)
	if limit == 0 || r.ContentLength <= limit {
		return nil
	}
	return report.Errorf(report.PayloadTooLarge, "the request announces %d bytes (Content-Length), more than the upload limit: max_upload_bytes is %s, plus %d bytes (1 MiB) for the multipart envelope",
		r.ContentLength, bytesAndGiB(maxUpload), envelopeAllowance)
}

// bytesAndGiB says a size in bytes and in GiB: "2147483648 bytes (2.00 GiB)".
func bytesAndGiB(n int64) string {
	return fmt.Sprintf("%d bytes (%.2f GiB)", n, float64(n)/(1<<30))
}
