package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
)

// The store's calls on objects still in the journal (journal.go): found
// there first, read from their pack, deleted by marking their entry.

// jobject is an object read from a pack.
type jobject struct {
	f *os.File
	*io.SectionReader
	info blob.Info
}

func (o *jobject) Close() error    { return o.f.Close() }
func (o *jobject) Info() blob.Info { return o.info }

// openEntry opens the size bytes at off of the pack at p as key's object.
func openEntry(p, key string, off, size int64, mtime time.Time) (blob.Object, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return &jobject{f: f, SectionReader: io.NewSectionReader(f, off, size),
		info: blob.Info{Key: key, Size: size, ModTime: mtime}}, nil
}

// openPending opens key's object in the journal. ok is false when the
// journal does not hold it, or no longer does (its pack was unpacked and
// removed meanwhile: its file is in place).
func (s *Store) openPending(key string) (o blob.Object, ok bool, err error) {
	e, ok := s.journal.lookup(key)
	if !ok {
		return nil, false, nil
	}
	o, err = openEntry(e.pack.path, key, e.off, e.size, e.mtime)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, blob.StorageErr(err, "cannot read the file")
	}
	return o, true, nil
}

func (e *jentry) info() blob.Info { return blob.Info{Key: e.key, Size: e.size, ModTime: e.mtime} }

// pendingUnder lists the live objects in the journal whose keys start
// with prefix.
func (j *journal) pendingUnder(prefix string) map[string]blob.Info {
	if j == nil {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	m := map[string]blob.Info{}
	for k, e := range j.idx {
		if !e.dead && strings.HasPrefix(k, prefix) {
			m[k] = e.info()
		}
	}
	return m
}

// deletePending deletes key if the journal holds it (even dead): its
// entry is marked so the unpacker skips it, and a file of it is removed.
func (s *Store) deletePending(key string) (handled bool, err error) {
	j := s.journal
	if j == nil {
		return false, nil
	}
	j.mu.RLock()
	_, in := j.idx[key]
	j.mu.RUnlock()
	if !in {
		return false, nil
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	j.mu.Lock()
	if e := j.idx[key]; e != nil {
		e.dead = true
	}
	j.mu.Unlock()
	if err := s.root.Remove(filepath.FromSlash(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, blob.StorageErr(err, "cannot remove the file")
	}
	return true, nil
}

// deadUnder marks every journal entry below the folder prefix (ending
// in "/") dead, and runs remove (the folder's removal) under the
// unpacker's lock.
func (s *Store) deadUnder(prefix string, remove func() error) error {
	j := s.journal
	if j == nil {
		return remove()
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	j.mu.Lock()
	for k, e := range j.idx {
		if strings.HasPrefix(k, prefix) {
			e.dead = true
		}
	}
	j.mu.Unlock()
	return remove()
}

// materialize writes key's object in the journal to its file now and
// durably (LocalPath: engines and backups take paths): a temp file,
// fsynced and renamed over the name (same bytes, whatever is there).
func (s *Store) materialize(key string) error {
	j := s.journal
	j.wmu.Lock()
	defer j.wmu.Unlock()
	o, ok, err := s.openPending(key)
	if err != nil || !ok {
		return err
	}
	defer o.Close()
	return s.replaceFile(context.Background(), key, o)
}

// replaceFile writes r to a temp file, fsyncs it and renames it over
// key's name, then fsyncs the folder.
func (s *Store) replaceFile(ctx context.Context, key string, r io.Reader) error {
	f, err := os.CreateTemp(s.tmp, TempPattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	buf := copyBufs.Get().(*[]byte)
	_, err = io.CopyBuffer(writerOnly{f}, blob.ContextReader(ctx, r), *buf)
	copyBufs.Put(buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	dst := s.abs(key)
	if err := s.root.MkdirAll(filepath.Dir(filepath.FromSlash(key)), 0o750); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return s.dirs.Sync(filepath.Dir(dst))
}
