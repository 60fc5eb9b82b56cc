package files

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Sweep removes everything in tmp/ and every file below uploads/ for which
// keep returns false, then empty cover folders. It runs at start-up, before
// the listener opens, so nothing is in flight. It returns what it removed.
func (d *Dir) Sweep(keep func(apiPath string) bool) ([]string, error) {
	var removed []string
	tmp := filepath.Join(d.base, tmpDir)
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		p := filepath.Join(tmp, e.Name())
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	uploads := filepath.Join(d.base, "uploads")
	var dirs []string
	err = filepath.WalkDir(uploads, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != uploads {
				dirs = append(dirs, p)
			}
			return nil
		}
		rel, _ := filepath.Rel(d.base, p)
		api := "/" + filepath.ToSlash(rel)
		if !keep(api) {
			if os.Remove(p) == nil {
				removed = append(removed, p)
			}
		}
		return nil
	})
	if err != nil {
		return removed, err
	}
	// Deepest first, so emptied project cover folders go too.
	for i := len(dirs) - 1; i >= 0; i-- {
		if strings.HasPrefix(dirs[i], filepath.Join(uploads, "covers")+string(filepath.Separator)) {
			os.Remove(dirs[i]) // fails, harmlessly, unless empty
		}
	}
	return removed, nil
}
