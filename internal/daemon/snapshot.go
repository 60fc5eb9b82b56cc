package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
)

// snapshot is one consistent state of the data directory, pinned on disk:
// a copy of the bbolt file written inside one read transaction, and a hard
// link to every file that transaction refers to. Files are never rewritten
// in place (uploads land by rename), so a link pins exactly the bytes the
// rows describe, even if the daemon deletes the original a moment later.
// The folder lives under tmp/, which the start-up sweep empties, so a crash
// mid-backup leaves nothing behind.
type snapshot struct {
	dir     string
	db      string         // path of the copied bbolt file
	files   []snapshotFile // in ref order
	missing []string       // referenced by a row, absent on disk (a damaged store)
}

type snapshotFile struct {
	name string // archive name, e.g. "uploads/reports/7.pdf"
	path string // the pinned link
}

// maxSnapshotTries bounds retries when a delete races the snapshot.
const maxSnapshotTries = 5

func takeSnapshot(store *boltstore.Store, dir *files.Dir) (*snapshot, error) {
	var prev []string
	for try := 0; ; try++ {
		s, err := trySnapshot(store, dir)
		if err != nil {
			return nil, err
		}
		// A file can vanish between the snapshot's start and its link only
		// if a delete committed meanwhile; a fresh snapshot no longer needs
		// it. The same paths missing twice are real damage: keep going and
		// let the manifest say so.
		if len(s.missing) == 0 || slices.Equal(s.missing, prev) || try+1 == maxSnapshotTries {
			return s, nil
		}
		prev = s.missing
		s.remove()
	}
}

func trySnapshot(store *boltstore.Store, dir *files.Dir) (*snapshot, error) {
	tmp, err := os.MkdirTemp(filepath.Join(dir.Base(), "tmp"), "backup-")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	s := &snapshot{dir: tmp, db: filepath.Join(tmp, "reportd.db")}
	err = store.SnapshotRefs(func(tx *bolt.Tx, refs []boltstore.Ref) error {
		// Copy first, link second: both inside the same read transaction.
		if err := tx.CopyFile(s.db, 0o600); err != nil {
			return fmt.Errorf("copy metadata: %w", err)
		}
		seen := map[string]bool{}
		for i, r := range refs {
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			src, err := dir.Abs(r.Path)
			if err != nil {
				s.missing = append(s.missing, r.Path)
				continue
			}
			link := filepath.Join(tmp, "f"+strconv.Itoa(i))
			if err := os.Link(src, link); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					s.missing = append(s.missing, r.Path)
					continue
				}
				return fmt.Errorf("pin %s: %w", r.Path, err)
			}
			s.files = append(s.files, snapshotFile{name: r.Path[1:], path: link})
		}
		return nil
	})
	if err != nil {
		s.remove()
		return nil, fmt.Errorf("backup: %w", err)
	}
	return s, nil
}

func (s *snapshot) remove() { os.RemoveAll(s.dir) }
