// Package local is the blob store over a directory: keys are file names
// below it. Writes are staged in a temp directory on the same file system,
// fsynced, renamed (or hard-linked, for IfNoneMatch) into place and the
// directory fsynced; reads go through an os.Root so no symlink leaves the
// directory, and Open hands back the *os.File so net/http sends it with
// sendfile(2).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// Store is a directory of objects.
type Store struct {
	dir  string     // absolute
	tmp  string     // absolute, same file system as dir, outside it
	root *os.Root   // dir: opens through it cannot leave it
	dirs *dirSyncer // directory fsyncs shared by concurrent uploads

	cleanMu  sync.Mutex     // orders later's Go before Close's Wait
	closing  bool           // Close began: cleanups run at once
	cleanups sync.WaitGroup // committed batches' cleanups (later)
	open     openDirs       // folders kept open for Stat (statdir.go)
	direct   *direct        // objects written in place (direct.go); nil: off
	journal  *journal       // small objects packed first (journal.go); nil: off
}

var (
	_ blob.Store         = (*Store)(nil)
	_ blob.Adopter       = (*Store)(nil)
	_ blob.Copier        = (*Store)(nil)
	_ blob.PrefixDeleter = (*Store)(nil)
	_ blob.Pather        = (*Store)(nil)
	_ blob.Stager        = (*Store)(nil)
)

// TempPattern names the store's temp files in the temp directory.
const TempPattern = "blob-*"

// Open prepares a store over dir, staging writes in tmp. tmp must be on the
// same file system as dir and outside it (reportd: <data>/uploads and
// <data>/tmp); whoever owns tmp clears it at start-up.
func Open(dir, tmp string) (*Store, error) {
	var err error
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if tmp, err = filepath.Abs(tmp); err != nil {
		return nil, err
	}
	if tmp == dir || strings.HasPrefix(tmp, dir+string(filepath.Separator)) {
		return nil, fmt.Errorf("blob/local: temp directory %s is inside %s", tmp, dir)
	}
	for _, d := range []string{dir, tmp} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, tmp: tmp, root: root, dirs: newDirSyncer()}
	// The journal's lock first: a store without it (another process has
	// it) takes no other, so two processes never split the two.
	j, err := s.lockJournal()
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("blob/local: read back the journal: %w", err)
	}
	if j != nil || journalOff {
		var taken bool
		if s.direct, taken, err = s.openDirect(); err != nil {
			j.unlock()
			root.Close()
			return nil, fmt.Errorf("blob/local: check the files a crash left pending: %w", err)
		}
		if taken { // by a process of a version without the journal: keep out of it
			j.unlock()
			j = nil
		}
	}
	if j != nil {
		s.journal = j
		go s.unpacker(j)
	}
	return s, nil
}

// Settle waits until the staging folders of the batches committed so far
// are removed and their journal packs unpacked (done in the background).
// Not while batches commit: tests call it once their uploads returned.
func (s *Store) Settle() {
	s.cleanups.Wait()
	s.journal.settle()
}

// Close waits for the staging folders of committed batches to be removed,
// stops the journal's unpacker (what it leaves is read back at the next
// Open) and releases the directory.
func (s *Store) Close() error {
	s.cleanMu.Lock()
	s.closing = true
	s.cleanMu.Unlock()
	s.cleanups.Wait()
	s.journal.halt()
	s.closeDirect()
	s.journal.unlock()
	s.open.close()
	return s.root.Close()
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// TempDir is the store's temp directory (blob.Stager): on its file system,
// so a file staged there is adopted by rename.
func (s *Store) TempDir() string { return s.tmp }

// LocalPath is the absolute file name of key, for engines that take paths
// (an object still in the journal is written to it first).
func (s *Store) LocalPath(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if _, ok := s.journal.lookup(key); ok {
		if err := s.materialize(key); err != nil {
			return "", blob.StorageErr(err, "cannot store the file")
		}
	}
	return s.abs(key), nil
}

func (s *Store) abs(key string) string { return filepath.Join(s.dir, filepath.FromSlash(key)) }

// Put stages r in a temp file, fsyncs it and moves it into place.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	f, err := os.CreateTemp(s.tmp, TempPattern)
	if err != nil {
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	tmp := f.Name()
	fail := func(err error) (blob.Info, error) {
		f.Close()
		os.Remove(tmp)
		return blob.Info{}, err
	}
	src := blob.ContextReader(ctx, r)
	if opt.Size > 0 {
		src = io.LimitReader(src, opt.Size+1)
	}
	n, err := io.Copy(f, src)
	if err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		return fail(blob.StorageErr(err, "cannot store the file"))
	}
	if opt.Size > 0 && n != opt.Size {
		return fail(report.Errorf(report.Validation, "object is %d bytes, not the %d announced", n, opt.Size))
	}
	if err := f.Sync(); err != nil {
		return fail(blob.StorageErr(err, "cannot store the file"))
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	info, err := s.place(ctx, key, tmp, opt.IfNoneMatch)
	if err != nil {
		os.Remove(tmp)
	}
	return info, err
}

// Adopt moves the complete, fsynced file at p to key by rename (by copy
// through Put if p is on another file system).
func (s *Store) Adopt(ctx context.Context, key, p string, opt blob.PutOptions) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	if opt.Size > 0 {
		fi, err := os.Stat(p)
		if err != nil {
			return blob.Info{}, blob.StorageErr(err, "cannot store the file")
		}
		if fi.Size() != opt.Size {
			return blob.Info{}, report.Errorf(report.Validation, "object is %d bytes, not the %d announced", fi.Size(), opt.Size)
		}
	}
	info, err := s.place(ctx, key, p, opt.IfNoneMatch)
	if !errors.Is(err, syscall.EXDEV) {
		return info, err
	}
	f, err := os.Open(p)
	if err != nil {
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	defer f.Close()
	if info, err = s.Put(ctx, key, f, opt); err == nil {
		os.Remove(p)
	}
	return info, err
}

// place moves the fsynced file tmp to key and fsyncs the directory. With
// ifNoneMatch it hard-links instead, which fails if key exists, and then
// removes tmp. On success tmp is gone.
func (s *Store) place(ctx context.Context, key, tmp string, ifNoneMatch bool) (blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	if _, ok := s.journal.lookup(key); ok && ifNoneMatch {
		return blob.Info{}, blob.Exists(key) // the journal holds it
	}
	if d := path.Dir(key); d != "." {
		if err := s.root.MkdirAll(filepath.FromSlash(d), 0o750); err != nil {
			return blob.Info{}, blob.StorageErr(err, "cannot store the file")
		}
	}
	dst := s.abs(key)
	if ifNoneMatch {
		if err := os.Link(tmp, dst); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return blob.Info{}, blob.Exists(key)
			}
			return blob.Info{}, placeErr(err)
		}
		os.Remove(tmp)
	} else if err := os.Rename(tmp, dst); err != nil {
		return blob.Info{}, placeErr(err)
	}
	if err := s.dirs.Sync(filepath.Dir(dst)); err != nil {
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	return s.Stat(ctx, key)
}

// placeErr keeps EXDEV visible to Adopt's fallback.
func placeErr(err error) error {
	if errors.Is(err, syscall.EXDEV) {
		return err
	}
	return blob.StorageErr(err, "cannot store the file")
}

// Open opens key's regular file. Anything else — missing, a directory, a
// symlink leaving the store — is NotFound.
func (s *Store) Open(ctx context.Context, key string) (blob.Object, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if o, ok, err := s.openPending(key); ok {
		return o, err
	}
	f, err := s.root.Open(filepath.FromSlash(key))
	if err != nil {
		return nil, blob.NotFound(key)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, blob.NotFound(key)
	}
	return &object{f: f, info: infoOf(key, fi)}, nil
}

// Stat describes key's regular file.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	if e, ok := s.journal.lookup(key); ok {
		return e.info(), nil
	}
	if info, found, ok := s.statFast(key); ok {
		if !found {
			return blob.Info{}, blob.NotFound(key)
		}
		return info, nil
	}
	fi, err := s.root.Stat(filepath.FromSlash(key))
	if err != nil || !fi.Mode().IsRegular() {
		return blob.Info{}, blob.NotFound(key)
	}
	return infoOf(key, fi), nil
}

// Delete removes key; missing keys and directories are not objects and
// are left alone.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if done, err := s.deletePending(key); done {
		return err
	}
	name := filepath.FromSlash(key)
	fi, err := s.root.Lstat(name)
	if err != nil || fi.IsDir() {
		return nil
	}
	if err := s.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return blob.StorageErr(err, "cannot remove the file")
	}
	return nil
}

// DeletePrefix removes a whole folder at once when prefix ends in "/",
// else every object whose key starts with prefix.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	if prefix == "" {
		return report.Wrap(report.Validation, fmt.Errorf("%w: empty prefix", blob.ErrInvalidKey), "invalid file name")
	}
	if d, ok := strings.CutSuffix(prefix, "/"); ok {
		if err := s.deadUnder(prefix, func() error { return s.root.RemoveAll(filepath.FromSlash(d)) }); err != nil {
			return blob.StorageErr(err, "cannot remove the files")
		}
		return nil
	}
	var keys []string
	if err := s.Walk(ctx, prefix, func(i blob.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// Copy hard-links src to dst (inside the root on both sides), durably.
func (s *Store) Copy(ctx context.Context, src, dst string) error {
	if err := checkKey(src); err != nil {
		return err
	}
	if err := checkKey(dst); err != nil {
		return err
	}
	if o, ok, err := s.openPending(src); ok {
		if err != nil {
			return err
		}
		defer o.Close()
		_, err = s.Put(ctx, dst, o, blob.PutOptions{IfNoneMatch: true, Size: o.Info().Size})
		return err
	}
	if fi, err := s.root.Lstat(filepath.FromSlash(src)); err != nil || !fi.Mode().IsRegular() {
		return blob.NotFound(src)
	}
	if d := path.Dir(dst); d != "." {
		if err := s.root.MkdirAll(filepath.FromSlash(d), 0o750); err != nil {
			return blob.StorageErr(err, "cannot store the file")
		}
	}
	if err := s.root.Link(filepath.FromSlash(src), filepath.FromSlash(dst)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return blob.Exists(dst)
		}
		return blob.StorageErr(fmt.Errorf("link: %w", err), "cannot store the file")
	}
	return blob.StorageErr(s.dirs.Sync(filepath.Dir(s.abs(dst))), "cannot store the file")
}

// Walk visits the regular files whose keys start with prefix, through the
// root (symlinks are not followed). Files vanishing meanwhile are skipped.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	start := "."
	if d, ok := strings.CutSuffix(prefix, "/"); ok {
		start = d
	} else if prefix != "" {
		start = path.Dir(prefix)
	}
	pending := s.journal.pendingUnder(prefix) // reported from the journal, not from their files
	fsys := s.root.FS()
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p == journalDir {
				return fs.SkipDir
			}
			if p != start && prefix != "" && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if _, ok := pending[p]; ok || !d.Type().IsRegular() || !strings.HasPrefix(p, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(infoOf(p, fi))
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	for _, i := range pending {
		if err != nil {
			break
		}
		err = fn(i)
	}
	return err
}

func infoOf(key string, fi fs.FileInfo) blob.Info {
	return blob.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}
}

// object is an open file; File lets net/http use sendfile.
type object struct {
	f    *os.File
	info blob.Info
}

func (o *object) Read(p []byte) (int, error)                { return o.f.Read(p) }
func (o *object) ReadAt(p []byte, off int64) (int, error)   { return o.f.ReadAt(p, off) }
func (o *object) Seek(off int64, whence int) (int64, error) { return o.f.Seek(off, whence) }
func (o *object) Close() error                              { return o.f.Close() }
func (o *object) Info() blob.Info                           { return o.info }
func (o *object) File() *os.File                            { return o.f }

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
