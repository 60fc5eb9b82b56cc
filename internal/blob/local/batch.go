package local

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

var _ blob.Batcher = (*Store)(nil)

// NewBatch starts a batch staged in its own folder below the store's temp
// directory: every staged file must be on the store's file system for
// syncfs and links to cover it. The folder is split in stageShards
// subfolders by key, so that the putter's workers do not all wait for
// one directory's lock to create their files.
//
// Commit runs syncfs(2) on the store's file system, so every staged file's
// bytes are durable; only then gives each its key with a hard link, a few
// at a time (link(2) takes no file-system-wide lock, unlike a rename
// across directories, and EEXIST means the object is there already, same
// content); where the file system has no hard links, a
// renameat2(RENAME_NOREPLACE) instead. One more syncfs then makes the new
// directory entries durable, and the staging folder, whose names are no
// longer needed, is removed in the background (Close waits for that).
// Nothing becomes visible under a key before its bytes are on disk, so a
// crash at any point leaves whole objects or none, plus temp files the
// start-up sweep removes. On a file system where syncfs does not apply
// (EINVAL, ENOSYS) each file and directory is fsynced instead.
//
// Content objects (PutOptions.SHA256 is the key's last segment) are
// written in place instead, marked pending until the commit's first flush
// (direct.go): no staging name, no link, and no second flush when the
// batch holds nothing else.
func (s *Store) NewBatch() blob.Batch { return &batch{s: s} }

// stageShards is how many subfolders a batch stages its files in.
const stageShards = 16

// placeWorkers is how many objects Commit links at once.
const placeWorkers = 8

type staged struct{ key, tmp string }

type batch struct {
	s   *Store
	mu  sync.Mutex
	dir string // the batch's staging folder, made at the first Put or Adopt
	// fsFD is the store's folder, opened with dir, before any file is
	// staged: syncfs(2) reports the write-back errors that happened since
	// its file was opened, so one opened at the commit could miss an
	// error another flush (a concurrent batch's) reported first.
	fsFD   *os.File
	shards [stageShards]bool
	objs   []staged
	byKey  map[string]string // key -> a temp file staged for it
	direct []string          // keys written in place (direct.go)
	jw     *jwriter          // the batch's journal pack (journal_write.go); kept for Open after the commit
	jwDone bool              // jw committed or discarded
	done   bool
}

var _ blob.BatchOpener = (*batch)(nil)

// Open reads key's staged temp file, or else the store's object: once
// Commit linked the temp file into place, or found the key there already.
func (b *batch) Open(ctx context.Context, key string) (blob.Object, error) {
	b.mu.Lock()
	tmp, ok := b.byKey[key]
	b.mu.Unlock()
	if o, ok := b.openOwn(key); ok {
		return o, nil
	}
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

// start opens the store's folder for the commit's syncfs, before the
// batch writes anything.
func (b *batch) start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return report.Errorf(report.Internal, "blob batch used after Commit or Discard")
	}
	if b.fsFD != nil {
		return nil
	}
	fd, err := os.Open(b.s.dir)
	if err != nil {
		return blob.StorageErr(err, "cannot store the file")
	}
	b.fsFD = fd
	return nil
}

// createTemp creates a temp file for key in its shard of the batch's
// staging folder.
func (b *batch) createTemp(key string) (*os.File, error) {
	if err := b.start(); err != nil {
		return nil, err
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	shard := h.Sum32() % stageShards
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return nil, report.Errorf(report.Internal, "blob batch used after Commit or Discard")
	}
	var err error
	if b.dir == "" {
		b.dir, err = os.MkdirTemp(b.s.tmp, "batch-*")
	}
	d := filepath.Join(b.dir, strconv.Itoa(int(shard)))
	if err == nil && !b.shards[shard] {
		if err = os.Mkdir(d, 0o700); err == nil {
			b.shards[shard] = true
		}
	}
	b.mu.Unlock()
	if err != nil {
		return nil, blob.StorageErr(err, "cannot store the file")
	}
	f, err := os.CreateTemp(d, TempPattern)
	if err != nil {
		return nil, blob.StorageErr(err, "cannot store the file")
	}
	return f, nil
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
	if err := checkKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.journals(key, opt) {
		return b.putJournal(ctx, key, r, opt)
	}
	if b.writesInPlace(key, opt) {
		if err := b.putDirect(ctx, key, r, opt); err != errStage {
			return err
		}
	}
	f, err := b.createTemp(key)
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := fill(ctx, f, r, opt); err != nil {
		os.Remove(tmp)
		return err
	}
	return b.add(key, tmp)
}

// fill writes r to f (opt.Size, if > 0, is checked) and closes f.
func fill(ctx context.Context, f *os.File, r io.Reader, opt blob.PutOptions) error {
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
	return err
}

func (b *batch) Adopt(ctx context.Context, key, p string, opt blob.PutOptions) error {
	if err := checkKey(key); err != nil {
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
	// Move it into the batch's staging folder, so syncfs of the store's
	// file system covers it; from another file system, copy it there.
	f, err := b.createTemp(key)
	if err != nil {
		os.Remove(p)
		return err
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
	opt.SHA256 = "" // a large file: staged, as adopted ones are
	err = b.Put(ctx, key, in, opt)
	in.Close()
	os.Remove(p)
	return err
}

// take ends the batch: no Put or Adopt is taken after it. Its pack stays
// readable (openOwn) until its objects are the store's or it is removed.
func (b *batch) take() (objs []staged, direct []string, dir string, fd *os.File, jw *jwriter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	objs, direct, dir, fd = b.objs, b.direct, b.dir, b.fsFD
	if !b.jwDone {
		jw, b.jwDone = b.jw, true
	}
	b.objs, b.direct, b.dir, b.fsFD, b.done = nil, nil, "", nil, true
	return objs, direct, dir, fd, jw
}

func (b *batch) Commit(ctx context.Context) (err error) {
	objs, direct, dir, fd, jw := b.take()
	if fd == nil {
		return nil
	}
	defer fd.Close()
	defer func() {
		if jw != nil {
			discardJournal(jw)
		}
	}()
	// The temp names go once the objects have theirs: in the background,
	// as nothing depends on it (the start-up sweep removes what a crash
	// leaves).
	if dir != "" {
		defer b.s.later(func() { os.RemoveAll(dir) })
	}
	defer func() {
		if err != nil && direct != nil {
			b.discardDirect(direct)
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	// One flush for every file written, in place or staged, and the
	// folder entries of those in place.
	perFile, err := syncFS(fd)
	if err != nil {
		return blob.StorageErr(err, "cannot store the files")
	}
	if perFile {
		if err := b.s.syncEach(objs, direct); err != nil {
			return blob.StorageErr(err, "cannot store the files")
		}
	}
	if jw != nil {
		err := b.s.commitJournal(jw, perFile)
		jw = nil
		if err != nil {
			return err
		}
	}
	if direct != nil {
		b.commitDirect(direct)
		direct = nil
	}
	if len(objs) == 0 {
		return nil
	}
	dirs := map[string]bool{}
	for _, o := range objs {
		if d := path.Dir(o.key); d != "." && !dirs[d] {
			if err := b.s.root.MkdirAll(filepath.FromSlash(d), 0o750); err != nil {
				return blob.StorageErr(err, "cannot store the files")
			}
			dirs[d] = true
		}
	}
	if err := b.placeAll(ctx, objs); err != nil {
		return err
	}
	if _, err := syncFS(fd); err != nil {
		return blob.StorageErr(err, "cannot store the files")
	}
	if perFile {
		if err := b.s.syncDirsUp(dirs); err != nil {
			return blob.StorageErr(err, "cannot store the files")
		}
	}
	return nil
}

// syncEach fsyncs the staged files, and the files written in place with
// their folders up to the store's (where syncfs does not apply).
func (s *Store) syncEach(objs []staged, direct []string) error {
	for _, o := range objs {
		if err := syncFile(o.tmp); err != nil {
			return err
		}
	}
	dirs := map[string]bool{}
	for _, k := range direct {
		if err := syncFile(s.abs(k)); err != nil {
			return err
		}
		dirs[path.Dir(k)] = true
	}
	return s.syncDirsUp(dirs)
}

// syncDirsUp fsyncs each folder of dirs, its parents and the store's.
func (s *Store) syncDirsUp(dirs map[string]bool) error {
	done := map[string]bool{}
	for d := range dirs {
		for ; d != "." && !done[d]; d = path.Dir(d) {
			if err := syncDir(s.abs(d)); err != nil {
				return err
			}
			done[d] = true
		}
	}
	return syncDir(s.dir)
}

// placeAll gives every staged object its key, placeWorkers at a time.
func (b *batch) placeAll(ctx context.Context, objs []staged) error {
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	n := min(placeWorkers, len(objs))
	for w := range n {
		wg.Go(func() {
			for i := w; i < len(objs) && failed.Load() == nil; i += n {
				err := ctx.Err()
				if err == nil {
					err = b.place(ctx, objs[i])
				}
				if err != nil && !errors.Is(err, fs.ErrExist) {
					if ctx.Err() == nil {
						err = blob.StorageErr(err, "cannot store the files")
					}
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// place gives a staged object its key: placeNew, or for a key that may
// hold a pending file, placeObject.
func (b *batch) place(ctx context.Context, o staged) error {
	if inPlaceKey(o.key) {
		return b.placeObject(ctx, o)
	}
	return placeNew(o.tmp, b.s.abs(o.key))
}

func (b *batch) Discard() {
	_, direct, dir, fd, jw := b.take()
	if jw != nil {
		discardJournal(jw)
	}
	if direct != nil {
		b.discardDirect(direct)
	}
	if fd != nil {
		fd.Close()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// syncFS flushes the file system f is on with syncfs(2); perFile is true
// when the kernel cannot (the caller then fsyncs file by file).
func syncFS(f *os.File) (perFile bool, err error) {
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// later runs fn in the background (a committed batch's cleanup), or now
// once the store is closing; Close waits for it.
func (s *Store) later(fn func()) {
	s.cleanMu.Lock()
	defer s.cleanMu.Unlock()
	if s.closing {
		fn()
		return
	}
	s.cleanups.Go(fn)
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// placeNew gives tmp's file the name dst unless dst exists (fs.ErrExist):
// a hard link, or where the file system has none, a
// renameat2(RENAME_NOREPLACE). The caller removes tmp's name.
func placeNew(tmp, dst string) error {
	err := unix.Link(tmp, dst)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fs.ErrExist
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EMLINK):
		err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			return fs.ErrExist
		}
	}
	return err
}

// copyBufs are the batch's copy buffers: a site's many small files would
// otherwise each allocate one.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// writerOnly hides *os.File's ReadFrom, so io.CopyBuffer uses the buffer.
type writerOnly struct{ io.Writer }
