package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"os"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
)

// HeadSize is how many leading bytes a Staged file keeps for sniffing.
const HeadSize = 4096

// Staged is an upload written to its blob store's staging area
// (blob.Stager: tmp/ for the local store), waiting for its final name. It is
// not fsynced here: Place makes it durable before it becomes visible (the
// local store fsyncs it before the rename), and an upload that never gets
// placed (a site archive, read back by the ingest and stored file by file)
// never needs to be.
type Staged struct {
	tmp    string
	Size   int64
	SHA256 string
	Head   []byte      // the first bytes, for content checks
	Scan   *sniff.Scan // what the content checks learned in the same pass
	done   bool
}

// Stage streams r into a temp file in st's staging area (blob.TempDir),
// hashing as it goes; Place then stores it in st. More than limit bytes
// (limit > 0) is PayloadTooLarge, and nothing is left behind.
func Stage(st blob.Store, r io.Reader, limit int64) (*Staged, error) {
	f, err := os.CreateTemp(blob.TempDir(st), "upload-*")
	if err != nil {
		return nil, report.Wrap(report.Storage, err, "cannot store the file")
	}
	s := &Staged{tmp: f.Name()}
	fail := func(err error) (*Staged, error) {
		f.Close()
		os.Remove(s.tmp)
		return nil, err
	}
	scan := new(sniff.Scan)
	h := scanningHash{sha256.New(), scan}
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, head, err := copyStaged(f, h, src)
	if err != nil {
		var tooBig *http.MaxBytesError
		var rerr *report.Error
		switch {
		case errors.Is(err, errWrite):
			return fail(report.Wrap(report.Storage, err, "cannot store the file"))
		case errors.As(err, &tooBig):
			return fail(report.Errorf(report.PayloadTooLarge, "upload exceeds the limit of %d bytes (%.2f GiB, max_upload_bytes)", limit, float64(limit)/(1<<30)))
		case errors.As(err, &rerr):
			return fail(err)
		}
		return fail(report.Wrap(report.Validation, err, "upload was cut short"))
	}
	if limit > 0 && n > limit {
		return fail(report.Errorf(report.PayloadTooLarge, "upload exceeds the limit of %d bytes (%.2f GiB, max_upload_bytes)", limit, float64(limit)/(1<<30)))
	}
	if err := f.Close(); err != nil {
		os.Remove(s.tmp)
		return nil, report.Wrap(report.Storage, err, "cannot store the file")
	}
	s.Size, s.SHA256, s.Head, s.Scan = n, hex.EncodeToString(h.Sum(nil)), head, scan
	return s, nil
}

// scanningHash feeds the content scan from the hasher's pass, so the whole
// upload is scanned without a second read.
type scanningHash struct {
	hash.Hash
	scan *sniff.Scan
}

func (h scanningHash) Write(p []byte) (int, error) {
	h.scan.Write(p)
	return h.Hash.Write(p)
}

// Open reads the staged bytes back (for validation that needs more than Head).
func (s *Staged) Open() (*os.File, error) { return os.Open(s.tmp) }

// Place stores the staged file under key in st, durably: a store that can
// adopt it (the local one: same file system) takes it by fsync, rename and
// an fsync of the directory (blob.PutFile), any other streams it (Size set from the staged file). After
// Place the caller may commit the row; Discard stays safe to defer.
func (s *Staged) Place(ctx context.Context, st blob.Store, key string, opt blob.PutOptions) error {
	opt.Size = s.Size
	if _, err := blob.PutFile(ctx, st, key, s.tmp, opt); err != nil {
		return blob.StorageErr(err, "cannot store the file")
	}
	if _, ok := st.(blob.Adopter); ok {
		s.done = true // renamed away: nothing left to discard
	}
	return nil
}

// Discard removes the temp file unless it was committed. Safe to defer.
func (s *Staged) Discard() {
	if s != nil && !s.done {
		os.Remove(s.tmp)
		s.done = true
	}
}
