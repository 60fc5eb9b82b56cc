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
	"slices"
	"strings"
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
			// The pack goes to the back of the queue, so that one that
			// cannot be unpacked does not hold up the others.
			pk.replay, pk.rewrite = true, true
			j.mu.Lock()
			if len(j.queue) > 1 && j.queue[0] == pk {
				j.queue = append(j.queue[1:], pk)
			}
			j.mu.Unlock()
			select {
			case <-time.After(backoff):
			case <-j.stop:
				return
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = time.Second
		j.done1(pk)
	}
}

// done1 drops an unpacked pack (its files are flushed): the pack goes,
// or is kept aside if it was read back damaged (for an operator to look
// at: some of its objects could not be), and then its entries leave the
// index (a reader finding the pack gone reads the file).
func (j *journal) done1(pk *jpack) {
	if pk.damaged {
		os.Rename(pk.path, strings.TrimSuffix(pk.path, packSuffix)+damagedSuffix)
	} else {
		os.Remove(pk.path) // a read back finds its objects in place
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.queue = slices.DeleteFunc(j.queue, func(q *jpack) bool { return q == pk })
	j.bytes -= pk.bytes
	for _, e := range pk.entries {
		if j.idx[e.key] == e {
			delete(j.idx, e.key)
		}
		j.all[e.key] = slices.DeleteFunc(j.all[e.key], func(q *jentry) bool { return q == e })
		if len(j.all[e.key]) == 0 {
			delete(j.all, e.key)
		}
	}
	if len(j.queue) == 0 {
		j.idle.Broadcast()
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
// or a file of it is there (checked first when pk is read back: a crash
// may have left it half written). The bytes go to a temp file linked to
// the key whole. wrote tells the flush has a file to cover.
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
	if !replay { // the object's file already (another upload's): nothing to write
		if _, perm, found, ok := s.statFastMode(e.key); ok && found && perm != pendingMode {
			return false, nil
		}
	}
	tmp, err := j.writeTemp(data)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	for range 3 {
		err := s.linkTemp(e.key, tmp)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		fi, err := s.root.Lstat(filepath.FromSlash(e.key))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile: link it again
		case err != nil:
			return false, err
		case !fi.Mode().IsRegular():
			return false, fmt.Errorf("%s: not a regular file", e.key) // kept in the journal
		case fi.Mode().Perm() == pendingMode:
			// Another batch's file written in place: ours takes the
			// name unless that one is the object (placeObject).
			err := (&batch{s: s}).placeObject(context.Background(), staged{key: e.key, tmp: tmp})
			if errors.Is(err, fs.ErrExist) {
				err = nil
			}
			return true, err
		case !replay:
			return false, nil // the object's file
		}
		if !rewrite && sameBytes(s.abs(e.key), data) {
			return true, nil // maybe not flushed yet: the flush covers it
		}
		return true, os.Rename(tmp, s.abs(e.key)) // whole bytes over a broken file
	}
	return false, unix.EEXIST
}

// writeTemp writes data to a new temp file in the journal's folder (on
// the store's file system, never swept by the daemon's start-up) and
// returns its name.
func (j *journal) writeTemp(data []byte) (string, error) {
	f, err := os.CreateTemp(j.dir, unpackTemp)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// linkTemp gives the temp file tmp the name key (placeNew; fs.ErrExist if
// taken), making its folder if missing.
func (s *Store) linkTemp(key, tmp string) error {
	dst := s.abs(key)
	err := placeNew(tmp, dst)
	if errors.Is(err, fs.ErrNotExist) {
		if err := s.root.MkdirAll(filepath.Dir(filepath.FromSlash(key)), 0o750); err != nil {
			return err
		}
		err = placeNew(tmp, dst)
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
