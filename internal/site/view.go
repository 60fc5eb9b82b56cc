package site

import (
	"context"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// OpenFunc opens one file of a site's manifest, or with f.Encoding its
// precompressed variant (VariantKey).
type OpenFunc func(ctx context.Context, f File) (blob.Object, error)

// View is the one way a site's files are read: its manifest and a way to
// open the manifest's files (for a site its content objects, for a
// single-file HTML report its stored file). Detection, conversion, the
// content origin and the zip download all read through it; FS adapts it
// to io/fs.
type View struct {
	Manifest Manifest
	open     OpenFunc
}

// NewView is the view of m whose files open.
func NewView(m Manifest, open OpenFunc) View { return View{Manifest: m, open: open} }

// OpenFile opens f, a file of the manifest (or its variant, f.Encoding).
func (v View) OpenFile(ctx context.Context, f File) (blob.Object, error) { return v.open(ctx, f) }

// Open opens the file at name (a manifest path). A name the manifest does
// not hold is report.NotFound that also errors.Is fs.ErrNotExist.
func (v View) Open(ctx context.Context, name string) (blob.Object, File, error) {
	f, ok := v.Manifest.Lookup(name)
	if !ok {
		return nil, File{}, report.Wrap(report.NotFound, fs.ErrNotExist, "no file "+name+" in the site")
	}
	o, err := v.open(ctx, f)
	return o, f, err
}

// FS is the view as an fs.FS whose reads run under ctx: the manifest's
// files, and the folders their paths imply (read-only, without times).
// A file's FileInfo.Sys is its File. The FS also implements fs.StatFS,
// answered from the manifest without opening anything.
func (v View) FS(ctx context.Context) fs.FS { return &viewFS{ctx: ctx, v: v} }

type viewFS struct {
	ctx  context.Context
	v    View
	once sync.Once
	dirs map[string][]fs.DirEntry // folder ("." the root) → its entries, sorted by name
}

func (f *viewFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if file, ok := f.v.Manifest.Lookup(name); ok {
		o, err := f.v.open(f.ctx, file)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &viewFile{Object: o, info: fileInfo{file}}, nil
	}
	if ents, ok := f.tree()[name]; ok {
		return &viewDir{info: dirInfo(name), ents: ents}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (f *viewFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if file, ok := f.v.Manifest.Lookup(name); ok {
		return fileInfo{file}, nil
	}
	if _, ok := f.tree()[name]; ok {
		return dirInfo(name), nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// tree builds the folders once, on the first look at one.
func (f *viewFS) tree() map[string][]fs.DirEntry {
	f.once.Do(func() {
		f.dirs = map[string][]fs.DirEntry{".": nil}
		for _, file := range f.v.Manifest.Files {
			var ent fs.DirEntry = fs.FileInfoToDirEntry(fileInfo{file})
			for p := file.Path; ; {
				dir := path.Dir(p)
				_, seen := f.dirs[dir]
				f.dirs[dir] = append(f.dirs[dir], ent)
				if seen || dir == "." {
					break
				}
				ent, p = fs.FileInfoToDirEntry(dirInfo(dir)), dir
			}
		}
		for _, ents := range f.dirs {
			slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		}
	})
	return f.dirs
}

// viewFile is an open file of a View: its object, with Seek and ReadAt.
type viewFile struct {
	blob.Object
	info fileInfo
}

func (f *viewFile) Stat() (fs.FileInfo, error) { return f.info, nil }

type viewDir struct {
	info dirInfo
	ents []fs.DirEntry
	off  int
}

func (d *viewDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *viewDir) Close() error               { return nil }
func (d *viewDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: string(d.info), Err: fs.ErrInvalid}
}

func (d *viewDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.off:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.off += len(rest)
	return slices.Clone(rest), nil
}

type fileInfo struct{ f File }

func (i fileInfo) Name() string       { return path.Base(i.f.Path) }
func (i fileInfo) Size() int64        { return i.f.Size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return i.f }

type dirInfo string // the folder's path

func (i dirInfo) Name() string       { return path.Base(string(i)) }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }
