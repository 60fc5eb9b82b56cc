package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// The journal. A batch's small content objects (keys of the site layout,
// inPlaceKey, PutOptions.SHA256 their last segment, at most
// maxJournalObject bytes) are appended to one pack file in the store's
// .journal/ folder instead of each being created as a file: what makes a
// site of 10,000 files slow to publish durably is creating and flushing
// 10,000 inodes, not their bytes. The commit flushes the file system
// (syncfs, which covers the pack), then appends the pack's trailer and
// fsyncs the pack again: a pack with a valid trailer is one whose every
// entry is durable. From then on its objects are the store's: Stat, Open
// and Walk find them in the journal's index, and a background unpacker
// writes each to its own file (mode 0600, through a temp file linked to
// the key whole, so a reader never finds part of one), flushes the file
// system once, removes the pack and drops its entries from the index.
//
// So each small object is written twice, once on the upload's path and
// once in the background, and an upload waits for one file and one flush
// instead of thousands of files. The index lives in memory; at Open,
// every pack with a valid trailer is read back (each entry's sha256 must
// be its name) and unpacked again, files found in place are checked
// before they are trusted, and a pack without one (an upload that never
// committed) is removed. Only the Store holding the journal's lock (a
// flock on .journal/) writes, reads back or unpacks packs; another one
// (an admin command beside the daemon) stages its objects as before and
// does not see objects still in the daemon's journal.
//
// A Delete of an object still in the journal marks its entries dead, in
// memory and in their packs' headers (the unpacker and a read back skip
// them), and removes any file of it, under the lock the unpacker writes
// each file under. The marks are not fsynced: like any delete
// (blob.Store.Delete need not be durable), a crash of the machine before
// the pack is unpacked may bring the object back, for the sweep of
// unreferenced objects to remove.

// journalDir is the journal's folder below the store's; Walk skips it
// and no key may name anything in it (checkKey).
const journalDir = ".journal"

// unpackTemp names the unpacker's temp files in the journal's folder.
const unpackTemp = "unpack-*"

// checkKey is blob.CheckKey, refusing the journal's folder too.
func checkKey(key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	if key == journalDir || strings.HasPrefix(key, journalDir+"/") {
		return report.Wrap(report.Validation, fmt.Errorf("%w %q: the store's journal", blob.ErrInvalidKey, key), "invalid file name")
	}
	return nil
}

// checkPrefix is blob.CheckPrefix, refusing the journal's folder too.
func checkPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return checkKey(strings.TrimSuffix(prefix, "/"))
}

// Bounds: an object larger than maxJournalObject is written as a file
// (its inode costs little beside its bytes), and past maxJournalBytes of
// packs not yet unpacked, batches write files again until the unpacker
// catches up.
const (
	maxJournalObject = 1 << 20
	maxJournalBytes  = 512 << 20
)

// Pack format: entries, each a header (entryMagic or deadMagic, the key's
// length, the object's size: entryHeader bytes), the key and the bytes;
// then the trailer (trailerMagic, the entry count, the trailer's offset,
// and a CRC-32C of those).
const (
	entryHeader   = 16
	trailerSize   = 24
	entryMagic    = "RJE1"
	deadMagic     = "RJEX" // a Put that failed after its header was written, or a deleted object
	trailerMagic  = "RJC1"
	packSuffix    = ".pack"
	damagedSuffix = ".damaged" // a pack read back with entries that could not be, kept once unpacked
)

// closeDrain bounds how long Close waits for the unpacker.
const closeDrain = 30 * time.Second

// journalOff turns the journal off, for the tests of objects written in
// place (direct_test.go).
var journalOff bool

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func putHeader(b []byte, magic string, keyLen int, size int64) {
	copy(b, magic)
	binary.LittleEndian.PutUint32(b[4:], uint32(keyLen))
	binary.LittleEndian.PutUint64(b[8:], uint64(size))
}

func trailer(count int, end int64) []byte {
	b := make([]byte, trailerSize)
	copy(b, trailerMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(count))
	binary.LittleEndian.PutUint64(b[8:], uint64(end))
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	return b
}

// jentry is an object in a pack.
type jentry struct {
	key       string
	pack      *jpack
	off, size int64 // of the object's bytes in the pack
	mtime     time.Time
	dead      bool // deleted: not the store's any more, not unpacked
}

// jpack is a committed pack, waiting to be unpacked.
type jpack struct {
	path    string
	entries []*jentry
	bytes   int64
	replay  bool // read back at Open: files found in place are checked
	rewrite bool // a flush of its files failed: files found in place are written again
	damaged bool // read back with entries that could not be: kept aside once unpacked
}

// journal is a store's journal state; nil when the store has none.
type journal struct {
	dir    string
	lockFD int

	mu    sync.RWMutex
	idx   map[string]*jentry   // committed objects not yet unpacked: the live entry of each key
	all   map[string][]*jentry // every queued entry of each key (a Delete marks them all)
	queue []*jpack
	bytes int64 // of the queued packs
	idle  *sync.Cond

	// wmu orders the unpacker's writing of an object's file and a
	// Delete of a key still in the journal.
	wmu sync.Mutex
	// running is held while a pack is unpacked (tests hold it to keep
	// packs in the journal).
	running sync.Mutex

	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	lockOnce sync.Once
}

// lockJournal takes the journal's lock and reads back the packs a
// previous run left (Open then starts the unpacker). It returns nil when
// another Store holds the lock.
func (s *Store) lockJournal() (*journal, error) {
	if journalOff {
		return nil, nil
	}
	dir := filepath.Join(s.dir, journalDir)
	if err := os.Mkdir(dir, 0o700); err == nil {
		if err := syncDir(s.dir); err != nil { // its name, before any pack relies on it
			return nil, err
		}
	} else if errors.Is(err, unix.EROFS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		return nil, nil // a read-only copy: no journal, nothing written
	} else if !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		unix.Close(fd)
		return nil, nil
	}
	j := &journal{dir: dir, lockFD: fd, idx: map[string]*jentry{}, all: map[string][]*jentry{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	j.idle = sync.NewCond(&j.mu)
	if err := j.readBack(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return j, nil
}

// unlock releases the journal's lock (once the unpacker stopped, or never
// started).
func (j *journal) unlock() {
	if j != nil {
		j.lockOnce.Do(func() { unix.Close(j.lockFD) })
	}
}

// readBack queues the packs with a valid trailer, oldest first, and
// removes the others and the unpacker's temp files.
func (j *journal) readBack() error {
	ents, err := os.ReadDir(j.dir)
	if err != nil {
		return err
	}
	sort.Slice(ents, func(a, b int) bool { return ents[a].Name() < ents[b].Name() })
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), unpackTemp[:len(unpackTemp)-1]) {
			os.Remove(filepath.Join(j.dir, e.Name()))
			continue
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), packSuffix) {
			continue
		}
		p := filepath.Join(j.dir, e.Name())
		pk, err := readPack(p)
		if err != nil {
			return err
		}
		if pk == nil { // no valid trailer: never committed
			if err := os.Remove(p); err != nil {
				return err
			}
			continue
		}
		pk.replay = true
		j.add(pk)
	}
	return nil
}

// readPack lists a pack's whole entries; nil if it has no valid trailer.
// A pack with one is never dropped: past a header this code cannot have
// written, the entries before it are kept, and a damaged pack is kept
// aside once unpacked (damaged).
func readPack(p string) (*jpack, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end := fi.Size() - trailerSize
	if end < 0 {
		return nil, nil
	}
	t := make([]byte, trailerSize)
	if _, err := f.ReadAt(t, end); err != nil {
		return nil, err
	}
	if string(t[:4]) != trailerMagic || crc32.Checksum(t[:16], castagnoli) != binary.LittleEndian.Uint32(t[16:]) ||
		int64(binary.LittleEndian.Uint64(t[8:])) != end {
		return nil, nil
	}
	pk := &jpack{path: p}
	mtime := fi.ModTime()
	h := make([]byte, entryHeader)
	for off := int64(0); off < end; {
		if _, err := f.ReadAt(h, off); err != nil {
			return nil, err
		}
		klen, size := int64(binary.LittleEndian.Uint32(h[4:])), int64(binary.LittleEndian.Uint64(h[8:]))
		next := off + entryHeader + klen + size
		if klen == 0 || klen > blob.MaxKeyLen || size < 0 || size > maxJournalObject || next > end || next < off {
			pk.damaged = true // keep what came before
			break
		}
		if string(h[:4]) == entryMagic {
			b := make([]byte, klen+size)
			if _, err := f.ReadAt(b, off+entryHeader); err != nil {
				return nil, err
			}
			// Every entry is checked: only whole objects are the store's.
			if key := string(b[:klen]); checkEntry(key, b[klen:]) && checkKey(key) == nil {
				pk.entries = append(pk.entries, &jentry{key: key, pack: pk, off: off + entryHeader + klen, size: size, mtime: mtime})
				pk.bytes += size
			} else {
				pk.damaged = true
			}
		} else if string(h[:4]) != deadMagic {
			pk.damaged = true
		}
		off = next
	}
	return pk, nil
}

// add makes pk's objects the store's (those not already in the index)
// and queues it for the unpacker.
func (j *journal) add(pk *jpack) {
	j.mu.Lock()
	for _, e := range pk.entries {
		if old := j.idx[e.key]; old == nil || old.dead {
			j.idx[e.key] = e
		}
		j.all[e.key] = append(j.all[e.key], e)
	}
	j.queue = append(j.queue, pk)
	j.bytes += pk.bytes
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// room tells whether a batch may add size bytes to the journal.
func (j *journal) room(size int64) bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.bytes+size <= maxJournalBytes
}

// lookup returns key's live entry, if the journal holds it.
func (j *journal) lookup(key string) (*jentry, bool) {
	if j == nil {
		return nil, false
	}
	j.mu.RLock()
	e := j.idx[key]
	live := e != nil && !e.dead
	j.mu.RUnlock()
	return e, live
}

// settle waits until every queued pack is unpacked (or the journal
// stopped).
func (j *journal) settle() {
	if j == nil {
		return
	}
	j.mu.Lock()
	for len(j.queue) > 0 && !j.stopped() {
		j.idle.Wait()
	}
	j.mu.Unlock()
}

func (j *journal) stopped() bool {
	select {
	case <-j.stop:
		return true
	default:
		return false
	}
}

// halt lets the unpacker finish the queued packs (for at most
// closeDrain) and stops it; Close then releases the lock (unlock), after
// the store's other one. What is left is read back at the next Open.
func (j *journal) halt() {
	if j == nil {
		return
	}
	j.stopOnce.Do(func() {
		drained := make(chan struct{})
		go func() { j.settle(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(closeDrain):
		}
		close(j.stop)
		<-j.done
		j.mu.Lock()
		j.idle.Broadcast()
		j.mu.Unlock()
	})
}
