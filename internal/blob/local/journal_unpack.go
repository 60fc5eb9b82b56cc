package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The unpacker (journal.go): each committed pack's objects written to
// their own files, oldest pack first, then one flush, and only then the
// pack's entries leave the index and the pack goes.

var errStopped = errors.New("blob/local: journal closed")

// unpacker unpacks the queued packs until the journal closes; a pack it
// cannot unpack (a full disk) is tried again, a little later each time.
func (s *Store) unpacker(j *journal) {
	defer close(j.done)
	backoff := time.Second
	for {
		j.mu.RLock()
		var pk *jpack
		if len(j.queue) > 0 {
			pk = j.queue[0]
		}
		j.mu.RUnlock()
		if pk == nil {
			select {
			case <-j.wake:
				continue
			case <-j.stop:
				return
			}
		}
		j.running.Lock()
		err := s.unpack(j, pk)
		j.running.Unlock()
		if j.stopped() {
			return
		}
		if err != nil {
			// Files may be half written, or (a failed flush) written but
			// not on disk whatever the page cache says: write them again.
			pk.replay, pk.rewrite = true, true
			select {
			case <-time.After(backoff):
			case <-j.stop:
				return
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = time.Second
		j.mu.Lock()
		j.queue = j.queue[1:]
		j.bytes -= pk.bytes
		for _, e := range pk.entries {
			if j.idx[e.key] == e {
				delete(j.idx, e.key)
			}
		}
		if len(j.queue) == 0 {
			j.idle.Broadcast()
		}
		j.mu.Unlock()
		os.Remove(pk.path) // a read back finds its objects in place
	}
}

// unpack writes every live entry of pk to its file and flushes them.
func (s *Store) unpack(j *journal, pk *jpack) error {
	f, err := os.Open(pk.path)
	if err != nil {
		return err
	}
	defer f.Close()
	fsFD, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer fsFD.Close()
	var written []string
	var buf []byte
	for _, e := range pk.entries {
		if j.stopped() {
			return errStopped
		}
		if int64(cap(buf)) < e.size {
			buf = make([]byte, e.size)
		}
		data := buf[:e.size]
		if _, err := f.ReadAt(data, e.off); err != nil {
			return err
		}
		wrote, err := s.unpackOne(j, e, data, pk.replay, pk.rewrite)
		if err != nil {
			return err
		}
		if wrote {
			written = append(written, e.key)
		}
	}
	perFile, err := syncFS(fsFD)
	if err == nil && perFile {
		err = s.syncEach(nil, written)
	}
	return err
}

// unpackOne writes e's object to its file, unless it is not the live one
// or a file of it is there (checked first when pk is read back: a crash may have
// left it half written). wrote tells the flush has a file to cover.
func (s *Store) unpackOne(j *journal, e *jentry, data []byte, replay, rewrite bool) (wrote bool, err error) {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	// Only the index's live entry for the key is unpacked: a later
	// pack's copy of an object already there (add keeps the first)
	// must not bring it back once it is deleted.
	j.mu.RLock()
	skip := e.dead || j.idx[e.key] != e
	j.mu.RUnlock()
	if skip {
		return false, nil
	}
	dir, name := path.Split(e.key)
	for range 3 {
		fd, err := s.open.createIn(s.root, dir, name, objectMode)
		if err == nil {
			f := os.NewFile(uintptr(fd), s.abs(e.key))
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return true, err
		}
		if !errors.Is(err, unix.EEXIST) {
			return false, err
		}
		fi, err := s.root.Lstat(filepath.FromSlash(e.key))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile: create it
		case err != nil:
			return false, err
		case !fi.Mode().IsRegular():
			return false, fmt.Errorf("%s: not a regular file", e.key) // kept in the journal
		case fi.Mode().Perm() == pendingMode:
			// Another batch's file written in place: ours takes the
			// name unless that one is the object (placeObject).
			return true, s.placeCopy(e.key, data)
		case !replay:
			return false, nil // the object's file
		}
		if !rewrite && sameBytes(s.abs(e.key), data) {
			return true, nil // maybe not flushed yet: the flush covers it
		}
		return true, s.replaceFile(context.Background(), e.key, bytes.NewReader(data))
	}
	return false, unix.EEXIST
}

// placeCopy gives key a copy of data through a temp file, as a staged
// object is placed where the name may hold a pending file.
func (s *Store) placeCopy(key string, data []byte) error {
	f, err := os.CreateTemp(s.tmp, TempPattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	err = (&batch{s: s}).placeObject(context.Background(), staged{key: key, tmp: tmp})
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	return err
}

// sameBytes tells whether the file at p holds exactly data.
func sameBytes(p string, data []byte) bool {
	b, err := os.ReadFile(p)
	return err == nil && bytes.Equal(b, data)
}

// checkEntry tells whether data is the object its key names.
func checkEntry(key string, data []byte) bool {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]) == path.Base(key)
}
