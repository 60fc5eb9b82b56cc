package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// errExists is refusing to overwrite without --force.
type errExists struct{ path string }

func (e errExists) Error() string {
	return fmt.Sprintf("%s already exists (use --force to overwrite)", e.path)
}

// checkWritable fails early, before anything is downloaded, when path exists
// and may not be replaced.
func checkWritable(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return errExists{path}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeFileAtomic streams r into path through a temp file in the same
// directory, so readers never see a partial file and an interrupted
// download leaves nothing behind. Without force an existing path is never
// replaced, even one created while the download ran: the temp file is
// hard-linked into place, which fails if the name is taken.
func writeFileAtomic(path string, r io.Reader, force bool) (n int64, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".part-*")
	if err != nil {
		return 0, err
	}
	tmpName := tmp.Name()
	defer func() {
		if tmp != nil {
			tmp.Close()
		}
		os.Remove(tmpName) // after a rename or link this is a no-op or drops the extra name
	}()
	if n, err = io.Copy(tmp, r); err != nil {
		return n, err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return n, err
	}
	if err = tmp.Sync(); err != nil {
		return n, err
	}
	err = tmp.Close()
	tmp = nil
	if err != nil {
		return n, err
	}
	if force {
		return n, os.Rename(tmpName, path)
	}
	if err = os.Link(tmpName, path); err == nil {
		return n, nil
	}
	if errors.Is(err, fs.ErrExist) {
		return n, errExists{path}
	}
	// No hard links here (some network and FUSE filesystems): check, then rename.
	if err := checkWritable(path, false); err != nil {
		return n, err
	}
	return n, os.Rename(tmpName, path)
}
