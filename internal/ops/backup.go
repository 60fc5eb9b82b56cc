package ops

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteBackup writes a backup archive to out with write: to out.partial
// first, which is then read back and verified, and only then renamed to
// out. The daemon decides where the archive comes from (a snapshot taken
// here, or the running daemon's GET /admin/backup).
func WriteBackup(out string, write func(w io.Writer) error) (Manifest, error) {
	tmp := out + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return Manifest{}, err
	}
	defer os.Remove(tmp) // a no-op after the rename
	err = func() error {
		defer f.Close()
		if err := write(f); err != nil {
			return err
		}
		return f.Sync()
	}()
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	m, err := VerifyArchive(tmp)
	if err != nil {
		return m, fmt.Errorf("backup: the archive written does not verify: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return m, err
	}
	return m, SyncDir(filepath.Dir(out))
}

// VerifyArchive reads a backup archive and checks every entry against its
// manifest.
func VerifyArchive(file string) (Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, err
	}
	defer f.Close()
	return ReadArchive(f, nil)
}

// SyncDir makes the entries of dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
