// Package files is the upload directory: streamed, durable writes and
// confined reads. Paths given to it are the API's relative paths
// ("/uploads/reports/7.pdf"); it never lets one leave the data directory.
package files

import (
	"errors"
	"fmt"
	"io/fs"
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
	root  *os.Root // uploads/: opens through it cannot leave it, even by a symlink
	blobs *local.Store
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
	// reportd.db, tmp/ or the cache.
	root, err := os.OpenRoot(filepath.Join(base, "uploads"))
	if err != nil {
		return nil, err
	}
	// The store stages its own writes in tmp/ too: the start-up sweep
	// clears them with the uploads'.
	blobs, err := local.Open(filepath.Join(base, "uploads"), filepath.Join(base, tmpDir))
	if err != nil {
		root.Close()
		return nil, err
	}
	return &Dir{base: base, root: root, blobs: blobs}, nil
}

func (d *Dir) Close() error { return errors.Join(d.blobs.Close(), d.root.Close()) }

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

// inRoot is rel (from clean) relative to the uploads/ root.
func inRoot(rel string) string {
	return filepath.FromSlash(strings.TrimPrefix(rel, strings.TrimPrefix(UploadsPrefix, "/")))
}

// Abs is the absolute file name of an API path, for engines that take paths.
func (d *Dir) Abs(p string) (string, error) {
	rel, err := clean(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.base, filepath.FromSlash(rel)), nil
}

// OpenFile opens a stored regular file. Symlinks that leave the data
// directory, directories and missing files are all NotFound.
func (d *Dir) OpenFile(p string) (*os.File, fs.FileInfo, error) {
	rel, err := clean(p)
	if err != nil {
		return nil, nil, err
	}
	f, err := d.root.Open(inRoot(rel))
	if err != nil {
		return nil, nil, report.Wrap(report.NotFound, err, "file not found")
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, report.Errorf(report.NotFound, "file not found")
	}
	return f, fi, nil
}

// Remove deletes a stored file; a missing one is not an error.
func (d *Dir) Remove(p string) error {
	rel, err := clean(p)
	if err != nil {
		return err
	}
	if err := d.root.Remove(inRoot(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveDir deletes a folder below uploads/ and everything in it.
func (d *Dir) RemoveDir(p string) error {
	rel, err := clean(p)
	if err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(d.base, filepath.FromSlash(rel)))
}

// Link gives an existing file a second name, durably, so that a rename can
// be committed before the old name goes.
func (d *Dir) Link(oldPath, newPath string) error {
	o, err := d.Abs(oldPath)
	if err != nil {
		return err
	}
	n, err := d.Abs(newPath)
	if err != nil {
		return err
	}
	if err := os.Link(o, n); err != nil {
		return fmt.Errorf("link: %w", err)
	}
	return syncDir(filepath.Dir(n))
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
