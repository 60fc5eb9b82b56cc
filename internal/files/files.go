// Package files is the data directory's file area: uploads/ as the local
// blob store (Blobs), tmp/ as its staging area (blob.Stager: uploads are
// staged there by Stage, streamed, hashed and scanned, and made durable
// only when Place stores them), and the start-up sweep. Paths given to it
// are the API's ("/uploads/reports/7.pdf"); Key turns them into blob keys,
// and nothing lets one leave uploads/.
package files

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/report"
)

const (
	// UploadsPrefix is the URL and path prefix of every stored file.
	UploadsPrefix = "/uploads/"
	tmpDir        = "tmp"
)

// Dir is the data directory's file area: uploads/ and its tmp/ sibling on
// the same file system, so a staged file lands by rename. uploads/ is also
// a blob store (Blobs), whose keys are the API paths without "/uploads/".
type Dir struct {
	base  string
	blobs *local.Store // uploads/, read through an os.Root: no symlink leaves it
}

// Open prepares base (creating uploads/reports, uploads/covers and tmp).
func Open(base string) (*Dir, error) {
	// Absolute, so that paths handed to engines mean the same from any cwd.
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"uploads/reports", "uploads/covers", tmpDir} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o750); err != nil {
			return nil, err
		}
	}
	// Rooted at uploads/, not the data directory, so that no link can reach
	// reportd.db, tmp/ or the cache. The store stages its own writes in
	// tmp/ too: the start-up sweep clears them with the uploads'.
	blobs, err := local.Open(filepath.Join(base, "uploads"), filepath.Join(base, tmpDir))
	if err != nil {
		return nil, err
	}
	return &Dir{base: base, blobs: blobs}, nil
}

func (d *Dir) Close() error { return d.blobs.Close() }

// Blobs is uploads/ as a blob store: report files under "reports/", covers
// under "covers/<project>/". Key and APIPath translate to and from the
// paths the rows keep.
func (d *Dir) Blobs() *local.Store { return d.blobs }

// Key is the blob key of an API path ("/uploads/reports/7.pdf" is
// "reports/7.pdf"); anything that is not a plain path below /uploads/ is
// NotFound, as for OpenFile.
func Key(p string) (string, error) {
	rel, err := clean(p)
	if err != nil {
		return "", err
	}
	k := strings.TrimPrefix(rel, strings.TrimPrefix(UploadsPrefix, "/"))
	if k == "" || k == rel {
		return "", report.Errorf(report.NotFound, "file not found")
	}
	return k, nil
}

// APIPath is the API path of a blob key.
func APIPath(key string) string { return UploadsPrefix + key }

// Base is the data directory.
func (d *Dir) Base() string { return d.base }

// clean turns an API path into a root-relative one, refusing anything that
// is not a plain path below /uploads/.
func clean(p string) (string, error) {
	if !strings.HasPrefix(p, UploadsPrefix) || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return "", report.Errorf(report.NotFound, "file not found")
	}
	c := path.Clean(p)
	if c != p || strings.Contains(c, "/../") || strings.HasSuffix(c, "/..") {
		return "", report.Errorf(report.NotFound, "file not found")
	}
	return strings.TrimPrefix(c, "/"), nil
}

// Abs is the absolute file name of an API path, for engines and backups
// that take paths.
func (d *Dir) Abs(p string) (string, error) {
	key, err := Key(p)
	if err != nil {
		return "", err
	}
	abs, err := d.blobs.LocalPath(key)
	if err != nil {
		return "", report.Wrap(report.NotFound, err, "file not found")
	}
	return abs, nil
}
