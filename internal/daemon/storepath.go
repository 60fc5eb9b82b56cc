package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reportd/reportd/internal/config"
)

// existingStore is the path of the bbolt store an admin command (token,
// backup, check) works on. Admin commands never create a store: run from
// the wrong directory, a relative data_dir ("./data") would otherwise get
// a fresh empty store, and the command would answer about that one. Only
// `reportd serve` (and restore) create one.
func existingStore(c config.Config) (string, error) {
	dir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return "", err
	}
	db := filepath.Join(dir, "reportd.db")
	_, err = os.Stat(db)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("no reportd store in the data directory %s (looked for %s; data_dir is %q): "+
			"admin commands never create one. Point them at the daemon's data directory with --data-dir, "+
			"REPORTD_DATA_DIR or data_dir in the config file (--config), or run `reportd serve` once to create it", dir, db, c.DataDir)
	}
	return "", fmt.Errorf("the store %s in the data directory %s: %w", db, dir, err)
}
