package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

var _ blob.Batcher = (*Store)(nil)

// NewBatch starts a batch staged in the store's temp directory: every
// staged file must be on the store's file system for syncfs and rename to
// cover it.
//
// Commit runs syncfs(2) on the store's file system, so every staged file's
// bytes are durable; only then moves each into place with
// renameat2(RENAME_NOREPLACE) (or a hard link where that is missing;
// EEXIST: the object is there already, same content, and the temp file
// goes); then
// one more syncfs makes the new directory entries durable. Nothing becomes
// visible under a key before its bytes are on disk, so a crash at any
// point leaves whole objects or none, plus temp files the start-up sweep
// removes. On a file system where syncfs does not apply (EINVAL, ENOSYS)
// each file and directory is fsynced instead.
func (s *Store) NewBatch() blob.Batch { return &batch{s: s} }

type staged struct{ key, tmp string }

type batch struct {
	s     *Store
	mu    sync.Mutex
	objs  []staged
	byKey map[string]string // key -> a temp file staged for it
	done  bool
}

var _ blob.BatchOpener = (*batch)(nil)

// Open reads key's staged temp file, or else the store's object: once
// Commit moved the temp file into place, or found the key there already.
func (b *batch) Open(ctx context.Context, key string) (blob.Object, error) {
	b.mu.Lock()
	tmp, ok := b.byKey[key]
	b.mu.Unlock()
	if ok {
		if f, err := os.Open(tmp); err == nil {
			fi, err := f.Stat()
			if err == nil {
				return &object{f: f, info: infoOf(key, fi)}, nil
			}
			f.Close()
		}
	}
	return b.s.Open(ctx, key)
}

func (b *batch) add(key, tmp string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		os.Remove(tmp)
		return report.Errorf(report.Internal, "blob batch used after Commit or Discard")
	}
	b.objs = append(b.objs, staged{key, tmp})
	if b.byKey == nil {
		b.byKey = map[string]string{}
	}
	b.byKey[key] = tmp
	return nil
}

func (b *batch) Put(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.CreateTemp(b.s.tmp, TempPattern)
	if err != nil {
		return blob.StorageErr(err, "cannot store the file")
	}
	tmp := f.Name()
	src := blob.ContextReader(ctx, r)
	if opt.Size > 0 {
		src = io.LimitReader(src, opt.Size+1)
	}
	buf := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(writerOnly{f}, src, *buf) // not os.File.ReadFrom's fresh 32 KiB
	copyBufs.Put(buf)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = blob.StorageErr(cerr, "cannot store the file")
	}
	switch {
	case err != nil && ctx.Err() != nil:
		err = ctx.Err()
	case err != nil:
		err = blob.StorageErr(err, "cannot store the file")
	case opt.Size > 0 && n != opt.Size:
		err = report.Errorf(report.Validation, "object is %d bytes, not the %d announced", n, opt.Size)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return b.add(key, tmp)
}

func (b *batch) Adopt(ctx context.Context, key, p string, opt blob.PutOptions) error {
	if err := blob.CheckKey(key); err != nil {
		os.Remove(p)
		return err
	}
	if opt.Size > 0 {
		fi, err := os.Stat(p)
		if err != nil {
			os.Remove(p)
			return blob.StorageErr(err, "cannot store the file")
		}
		if fi.Size() != opt.Size {
			os.Remove(p)
			return report.Errorf(report.Validation, "object is %d bytes, not the %d announced", fi.Size(), opt.Size)
		}
	}
	// Move it into the store's temp directory, so syncfs of the store's
	// file system covers it; from another file system, copy it there.
	f, err := os.CreateTemp(b.s.tmp, TempPattern)
	if err != nil {
		os.Remove(p)
		return blob.StorageErr(err, "cannot store the file")
	}
	tmp := f.Name()
	f.Close()
	if err := os.Rename(p, tmp); err == nil {
		return b.add(key, tmp)
	} else if !errors.Is(err, unix.EXDEV) {
		os.Remove(p)
		os.Remove(tmp)
		return blob.StorageErr(err, "cannot store the file")
	}
	os.Remove(tmp)
	in, err := os.Open(p)
	if err != nil {
		os.Remove(p)
		return blob.StorageErr(err, "cannot store the file")
	}
	err = b.Put(ctx, key, in, opt)
	in.Close()
	os.Remove(p)
	return err
}

func (b *batch) take() []staged {
	b.mu.Lock()
	defer b.mu.Unlock()
	objs := b.objs
	b.objs, b.done = nil, true
	return objs
}

func (b *batch) Commit(ctx context.Context) error {
	objs := b.take()
	defer func() {
		for _, o := range objs {
			if o.tmp != "" {
				os.Remove(o.tmp) // linked ones: their temp name only
			}
		}
	}()
	if len(objs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	perFile, err := b.s.syncFS()
	if err != nil {
		return blob.StorageErr(err, "cannot store the files")
	}
	if perFile {
		for _, o := range objs {
			if err := syncFile(o.tmp); err != nil {
				return blob.StorageErr(err, "cannot store the files")
			}
		}
	}
	slices.SortFunc(objs, func(a, c staged) int {
		switch {
		case a.key < c.key:
			return -1
		case a.key > c.key:
			return 1
		}
		return 0
	})
	dirs := map[string]bool{}
	for i, o := range objs {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := path.Dir(o.key)
		if d != "." && !dirs[d] {
			if err := b.s.root.MkdirAll(filepath.FromSlash(d), 0o750); err != nil {
				return blob.StorageErr(err, "cannot store the files")
			}
			dirs[d] = true
		}
		renamed, err := placeNew(o.tmp, b.s.abs(o.key))
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return blob.StorageErr(err, "cannot store the files")
		}
		if renamed {
			objs[i].tmp = "" // nothing left to remove
		}
	}
	if _, err := b.s.syncFS(); err != nil {
		return blob.StorageErr(err, "cannot store the files")
	}
	if perFile {
		for d := range dirs {
			for ; d != "."; d = path.Dir(d) {
				if err := syncDir(b.s.abs(d)); err != nil {
					return blob.StorageErr(err, "cannot store the files")
				}
			}
		}
		if err := syncDir(b.s.dir); err != nil {
			return blob.StorageErr(err, "cannot store the files")
		}
	}
	return nil
}

func (b *batch) Discard() {
	for _, o := range b.take() {
		os.Remove(o.tmp)
	}
}

// syncFS flushes the store's whole file system with syncfs(2); perFile is
// true when the kernel cannot (the caller then fsyncs file by file).
func (s *Store) syncFS() (perFile bool, err error) {
	f, err := os.Open(s.dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// placeNew moves tmp to dst unless dst exists (fs.ErrExist): one
// renameat2(RENAME_NOREPLACE) where the file system has it, else a hard
// link (the caller removes tmp).
func placeNew(tmp, dst string) (renamed bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return false, fs.ErrExist
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return false, os.Link(tmp, dst)
	}
	return false, err
}

// copyBufs are the batch's copy buffers: a site's many small files would
// otherwise each allocate one.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// writerOnly hides *os.File's ReadFrom, so io.CopyBuffer uses the buffer.
type writerOnly struct{ io.Writer }
