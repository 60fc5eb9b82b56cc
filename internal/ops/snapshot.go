package ops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// Snapshot is one consistent state of the data directory, pinned on disk:
// a copy of the bbolt file written inside one read transaction, and a hard
// link to every file that transaction refers to. Files are never rewritten
// in place (uploads land by rename), so a link pins exactly the bytes the
// rows describe, even if the daemon deletes the original a moment later.
// The folder lives under tmp/, which the start-up sweep empties, so a crash
// mid-backup leaves nothing behind.
type Snapshot struct {
	dir     string
	db      string         // path of the copied bbolt file
	files   []snapshotFile // in ref order
	missing []string       // referenced by a row, absent on disk (a damaged store)
}

type snapshotFile struct {
	name string // archive name, e.g. "uploads/reports/7.pdf"
	path string // the pinned link
}

// Snapshotter is a metadata store that copies itself to dst and names the
// files its rows refer to, both in one consistent state
// (boltstore.Store: one read transaction). fn runs while that state holds.
type Snapshotter interface {
	CopyWithRefs(dst string, fn func(refs []report.FileRef) error) error
}

// maxSnapshotTries bounds retries when a delete races the snapshot.
const maxSnapshotTries = 5

func TakeSnapshot(store Snapshotter, dir *files.Dir) (*Snapshot, error) {
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
		s.Remove()
	}
}

func trySnapshot(store Snapshotter, dir *files.Dir) (*Snapshot, error) {
	tmp, err := os.MkdirTemp(filepath.Join(dir.Base(), "tmp"), "backup-")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	s := &Snapshot{dir: tmp, db: filepath.Join(tmp, "reportd.db")}
	// Copy first, link second: both inside the same read transaction.
	err = store.CopyWithRefs(s.db, func(refs []report.FileRef) error {
		seen := map[string]bool{}
		pin := func(p string) (string, error) {
			if seen[p] {
				return "", nil
			}
			seen[p] = true
			src, err := dir.Abs(p)
			if err != nil {
				s.missing = append(s.missing, p)
				return "", nil
			}
			link := filepath.Join(tmp, "f"+strconv.Itoa(len(seen)))
			if err := os.Link(src, link); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					s.missing = append(s.missing, p)
					return "", nil
				}
				return "", fmt.Errorf("pin %s: %w", p, err)
			}
			s.files = append(s.files, snapshotFile{name: p[1:], path: link})
			return link, nil
		}
		for _, r := range refs {
			link, err := pin(r.Path)
			if err != nil {
				return err
			}
			if link == "" || !strings.HasPrefix(r.Path, report.SitesPrefix) {
				continue
			}
			// A site's row owns its manifest; the manifest names the
			// content objects, pinned too (a GC after a delete that
			// committed meanwhile can only make them missing, and the
			// retry takes a fresh snapshot).
			if err := pinSiteFiles(link, pin); err != nil {
				return fmt.Errorf("pin the files of %s: %w", r.Path, err)
			}
		}
		return nil
	})
	if err != nil {
		s.Remove()
		return nil, fmt.Errorf("backup: %w", err)
	}
	return s, nil
}

func (s *Snapshot) Remove() { os.RemoveAll(s.dir) }

// pinSiteFiles pins the content objects the site manifest at file names.
func pinSiteFiles(file string, pin func(apiPath string) (string, error)) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	var m site.Manifest
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return err
	}
	for _, sf := range m.Files {
		if len(sf.SHA256) != 64 {
			return fmt.Errorf("file %q has no content key", sf.Path)
		}
		if _, err := pin(files.APIPath(sf.Key())); err != nil {
			return err
		}
	}
	return nil
}
