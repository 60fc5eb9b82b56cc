package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/reportd/reportd/internal/idempotency"
	"github.com/reportd/reportd/internal/report"
)

// idemHeader is the header a client names its upload with, so that a
// retry after a lost response gets the first answer (docs/api.md).
const idemHeader = "Idempotency-Key"

// idemKey is the request's Idempotency-Key ("" when none is sent), or a
// ValidationError for a malformed one.
func idemKey(r *http.Request) (string, error) {
	vs, sent := r.Header[idemHeader]
	if !sent {
		return "", nil
	}
	if len(vs) != 1 {
		return "", report.Errorf(report.Validation, "send one Idempotency-Key header, not %d", len(vs))
	}
	if err := idempotency.CheckKey(vs[0]); err != nil {
		return "", report.Errorf(report.Validation, "%v", err)
	}
	return vs[0], nil
}

// uploadRequest is what an upload is compared by under one key: its parsed
// fields and the SHA-256 of every file, never the raw multipart body
// (whose boundary changes on every retry).
type uploadRequest struct {
	ProjectID int64            `json:"projectId"`
	FileType  report.FileType  `json:"fileType"`
	FileName  string           `json:"fileName"`
	Meta      report.BuildMeta `json:"meta"`
	Entry     string           `json:"entry"`
	Root      string           `json:"root"`
	Files     [][2]string      `json:"files"` // name as sent, SHA-256
}

func (u uploadRequest) fingerprint() string {
	b, _ := json.Marshal(u)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// idemClaim claims key for the request. It returns done true when the
// request is answered here (the first answer replayed) or an error (a
// ConflictError for another request under the key, or one in flight);
// otherwise finish must be called with the outcome: the answer to keep,
// or nil to forget the key (the request failed; a retry runs again).
func (s *Server) idemClaim(w http.ResponseWriter, r *http.Request, key string, req uploadRequest) (done bool, finish func(status int, body []byte), err error) {
	keys := s.cfg.Idempotency
	if key == "" || keys == nil {
		return false, func(int, []byte) {}, nil
	}
	stored := key
	if p := principalOf(r.Context()); p != nil {
		stored = p.ID + " " + key // one token's keys never answer another's
	}
	fp := req.fingerprint()
	rec, claimed, err := keys.Claim(r.Context(), stored, fp)
	if err != nil {
		return true, nil, err
	}
	if !claimed {
		switch {
		case rec.Fingerprint != fp:
			return true, nil, report.Errorf(report.Conflict,
				"Idempotency-Key %q was used for a different upload (another file, project or field) within 24 h; use a new key for a new upload", key)
		case !rec.Done:
			w.Header().Set("Retry-After", "2")
			return true, nil, report.Errorf(report.Conflict, "an upload with Idempotency-Key %q is still in progress; retry after a moment to get its answer", key)
		}
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Idempotent-Replayed", "true")
		w.WriteHeader(rec.Status)
		w.Write(rec.Body)
		return true, nil, nil
	}
	ctx := context.WithoutCancel(r.Context())
	return false, func(status int, body []byte) {
		if body == nil {
			if err := keys.Store.ReleaseIdempotencyKey(ctx, stored); err != nil {
				s.log.Warn("cannot release an Idempotency-Key after a failed upload: retries wait for its lease", "err", err)
			}
			return
		}
		if err := keys.Store.FinishIdempotencyKey(ctx, stored, status, body); err != nil {
			s.log.Warn("cannot keep the answer of an Idempotency-Key: a retry waits for its lease, then uploads again", "err", err)
		}
	}, nil
}

// jsonBytes is the body writeJSON writes for v.
func jsonBytes(status int, v any) (int, []byte) {
	rec := &bodyRecorder{header: http.Header{}}
	writeJSON(rec, status, v)
	return rec.status, rec.body
}

type bodyRecorder struct {
	header http.Header
	status int
	body   []byte
}

func (b *bodyRecorder) Header() http.Header    { return b.header }
func (b *bodyRecorder) WriteHeader(status int) { b.status = status }
func (b *bodyRecorder) Write(p []byte) (int, error) {
	b.body = append(b.body, p...)
	return len(p), nil
}
