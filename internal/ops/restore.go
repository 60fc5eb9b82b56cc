package ops

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Restore unpacks a backup archive into dataDir, which must be empty or
// absent. Entries land in a staging folder inside dataDir first; only when
// every checksum agrees with the manifest are they moved into place, so a
// bad archive leaves dataDir as empty as it was.
func Restore(in, dataDir string) (Manifest, error) {
	if in == "" || dataDir == "" {
		return Manifest{}, errors.New("--in and --data-dir are required")
	}
	created, err := ensureEmptyDir(dataDir)
	if err != nil {
		return Manifest{}, err
	}
	stage := filepath.Join(dataDir, ".restore")
	fail := func(err error) (Manifest, error) {
		// dataDir was empty: anything in it now is ours.
		os.RemoveAll(stage)
		os.RemoveAll(filepath.Join(dataDir, "uploads"))
		if created {
			os.Remove(dataDir)
		}
		return Manifest{}, fmt.Errorf("restore: %w", err)
	}
	src, err := os.Open(in)
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	dirs := map[string]bool{}
	m, err := ReadArchive(src, func(name string, size int64, body io.Reader) error {
		dst := filepath.Join(stage, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
			return err
		}
		dirs[filepath.Dir(dst)] = true
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.CopyN(f, body, size); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		return fail(err)
	}
	for d := range dirs {
		if err := SyncDir(d); err != nil {
			return fail(err)
		}
	}
	// uploads/ first, reportd.db last: a crash in between leaves files
	// without a store, which the next restore attempt (after emptying the
	// directory) or the start-up sweep deals with, never rows without files.
	if _, err := os.Stat(filepath.Join(stage, "uploads")); err == nil {
		if err := os.Rename(filepath.Join(stage, "uploads"), filepath.Join(dataDir, "uploads")); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(filepath.Join(stage, DBEntryName), filepath.Join(dataDir, DBEntryName)); err != nil {
		return fail(err)
	}
	if err := os.RemoveAll(stage); err != nil {
		return m, err
	}
	return m, SyncDir(dataDir)
}

// ensureEmptyDir creates dir or checks that it holds nothing, so a restore
// never mixes with (or overwrites) live data.
func ensureEmptyDir(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, os.MkdirAll(dir, 0o750)
	case err != nil:
		return false, err
	case len(entries) > 0:
		return false, fmt.Errorf("restore: %s is not empty (%d entries); restore into an empty data directory", dir, len(entries))
	}
	return false, nil
}
