package local

import (
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
// entries are marked dead (markDead) so the unpacker skips them, and a
// file of it is removed.
func (s *Store) deletePending(key string) (handled bool, err error) {
	j := s.journal
	if j == nil {
		return false, nil
	}
	j.mu.RLock()
	in := len(j.all[key]) > 0
	j.mu.RUnlock()
	if !in {
		return false, nil
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	j.markDead(func(k string) bool { return k == key })
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
	j.markDead(func(k string) bool { return strings.HasPrefix(k, prefix) })
	return remove()
}

// markDead marks every queued entry of the keys match picks dead, in
// memory and in its pack's header (best effort: a read back then skips
// it). Under wmu.
func (j *journal) markDead(match func(string) bool) {
	j.mu.Lock()
	var marked []*jentry
	for k, es := range j.all {
		if !match(k) {
			continue
		}
		for _, e := range es {
			if !e.dead {
				e.dead = true
				marked = append(marked, e)
			}
		}
	}
	j.mu.Unlock()
	hdr := make([]byte, entryHeader)
	for _, e := range marked {
		f, err := os.OpenFile(e.pack.path, os.O_WRONLY, 0)
		if err != nil {
			continue // unpacked and removed meanwhile
		}
		putHeader(hdr, deadMagic, len(e.key), e.size)
		f.WriteAt(hdr, e.off-int64(len(e.key))-entryHeader)
		f.Close()
	}
}

// materialize writes key's object in the journal to its file now
// (LocalPath: engines and backups take paths), as the unpacker would
// after a read back: whole, and over whatever file holds other bytes.
// Not flushed: the pack keeps the object durable until the unpacker's
// flush.
func (s *Store) materialize(key string) error {
	e, ok := s.journal.lookup(key)
	if !ok {
		return nil
	}
	o, err := openEntry(e.pack.path, key, e.off, e.size, e.mtime)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // unpacked meanwhile
	}
	if err != nil {
		return err
	}
	data, err := io.ReadAll(o)
	o.Close()
	if err != nil {
		return err
	}
	_, err = s.unpackOne(s.journal, e, data, true, false)
	return err
}
