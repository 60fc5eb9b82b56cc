package watch

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Sites mode (--sites, --marker): every folder at the site level of a
// watched folder (DIR/SITE, or DIR/PROJECT/SITE with --project-from-dir) is
// one unit of the pipeline instead of each file: it settles as a whole
// (its fingerprint, below, unchanged for --settle), is published once as a
// site (a deterministic tar.zst of its files, internal/dirzip) and is recorded in
// the state file under its own path, so a restart publishes it no second
// time. With --marker NAME a folder is published only once NAME exists in
// it, right away; the marker itself is not uploaded.

// siteDepth is how many path parts below a watched folder a site folder is.
func (o *options) siteDepth() int {
	if o.projectFromDir {
		return 2
	}
	return 1
}

// siteOf returns the site folder that path (under root) is, or is inside
// of; false for the watched folder itself, its loose files and, with
// --project-from-dir, the project folders and their loose files.
func (o *options) siteOf(root, path string) (string, bool) {
	rel, ok := relTo(root, path)
	if !ok || rel == "." {
		return "", false
	}
	parts := strings.SplitN(rel, "/", o.siteDepth()+1)
	if len(parts) < o.siteDepth() {
		return "", false
	}
	return filepath.Join(root, filepath.FromSlash(strings.Join(parts[:o.siteDepth()], "/"))), true
}

// hasMarker reports whether site may be published as far as --marker is
// concerned.
func (o *options) hasMarker(site string) bool {
	if o.marker == "" {
		return true
	}
	fi, err := os.Lstat(filepath.Join(site, o.marker))
	return err == nil && fi.Mode().IsRegular()
}

// excludeMarker leaves the marker file out of the archive.
func (o *options) excludeMarker(name string) bool { return o.marker != "" && name == o.marker }

// siteInfo is a site folder's fingerprint, as a FileInfo for the tracker:
// Size is the bytes of its regular files, ModTime the newest modification
// time of anything in it, folders included (a folder's changes when an
// entry is added, removed or renamed in it).
type siteInfo struct {
	name  string
	size  int64
	mtime time.Time
}

func (s siteInfo) Name() string       { return s.name }
func (s siteInfo) Size() int64        { return s.size }
func (s siteInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (s siteInfo) ModTime() time.Time { return s.mtime }
func (s siteInfo) IsDir() bool        { return true }
func (s siteInfo) Sys() any           { return nil }

// siteStat walks a site folder for its fingerprint. It is lenient: links
// and special files count by their own size and time (dirzip refuses them
// at publication, with a clear error).
func siteStat(dir string) (fs.FileInfo, error) {
	top, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !top.IsDir() {
		return top, nil // not a site (any more): the tracker drops it
	}
	info := siteInfo{name: filepath.Base(dir), mtime: top.ModTime()}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished while walking: the next look sees the change
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if fi.ModTime().After(info.mtime) {
			info.mtime = fi.ModTime()
		}
		if fi.Mode().IsRegular() {
			info.size += fi.Size()
		}
		return nil
	})
	return info, err
}

// unitStat is the tracker's look at one unit: the file itself, or a site
// folder's fingerprint.
func (o *options) unitStat(path string) (fs.FileInfo, error) {
	if o.sites {
		return siteStat(path)
	}
	return os.Lstat(path)
}

// isUnit tells whether fi (from unitStat) is something the pipeline
// publishes: a regular file, or in sites mode a folder.
func (o *options) isUnit(fi fs.FileInfo) bool {
	if o.sites {
		return fi.IsDir()
	}
	return fi.Mode().IsRegular()
}

// statOf is unitStat as the state file's cheap identity.
func statOf(fi fs.FileInfo) stat {
	return stat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
