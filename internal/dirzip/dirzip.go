// Package dirzip turns a folder into a deterministic archive stream: a tar
// inside one zstd frame (tar.zst), where the same files give the same
// bytes, whoever runs it and whenever. It is how reportctl uploads a folder
// as one site (`reportctl upload DIR`, `watch --sites`) without a temporary
// file: the archive is written into a pipe while the request body is sent,
// and written again from the start for a retry. (The package kept its name
// from when it wrote a zip; the server tells the formats apart by their
// first bytes, and a tar lets it store files while the stream arrives,
// where a zip's directory comes last.)
//
// Determinism: entries are the folder's files only (no folder entries),
// regular-file entries named by their slash path relative to the folder and
// sorted bytewise; every entry has the same modification time (Epoch), mode
// (0644) and owner (0, no user or group name), and no access or change
// time. The tar is compressed as a whole by zstd (klauspost/compress) at
// its fastest level with settings fixed in this package (write.go), so the
// bytes depend on the files only: they can differ between releases of the
// compressor, never between runs or machines.
//
// Safety: the folder is read through os.Root, so nothing outside it is ever
// read. A symbolic link is followed only when it names a regular file inside
// the folder (it is then stored as a copy of that file under the link's
// name); a link that leads outside, is broken, or names a folder is refused
// with an error naming it, and so is every other non-regular file (named
// pipe, socket, device). Nothing is skipped silently: the only files left
// out are those the caller's Exclude names.
package dirzip

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// Epoch is the modification time of every entry. It is the date the zips
// of earlier versions carried (the earliest an MS-DOS date holds), kept
// rather than the Unix epoch so that sites read the same through either
// format, and because some tools take a zero time for "unset".
var Epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// File is one file of the tree.
type File struct {
	Name  string // slash path relative to the folder
	Size  int64  // at scan time
	MTime time.Time
	Link  bool // reached through a symbolic link inside the folder
}

// Tree is a scanned folder, ready to be archived any number of times.
type Tree struct {
	Dir    string
	Hashed bool   // Options.Hash: WriteTo computes Result.SHA256
	Files  []File // sorted by Name
	Bytes  int64  // sum of the sizes
	// Latest is the newest modification time of any file or folder of the
	// tree (folders change when entries are added, removed or renamed).
	Latest time.Time
}

// Options tune Scan.
type Options struct {
	// Exclude, when set, leaves out the files it returns true for (a watch
	// marker file). It is given the slash path relative to the folder.
	Exclude func(name string) bool
	// CheckName, when set, vets every file name (the server's rules, so that
	// a name it would refuse fails before anything is sent).
	CheckName func(name string) error
	// Hash makes WriteTo compute the TreeHash of what it reads
	// (Result.SHA256): a sha256 of every byte, about a fifth of the
	// archive's CPU, that only who compares trees (watch) needs.
	Hash bool
}

// Scan lists the files of dir.
func Scan(dir string, o Options) (*Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	t := &Tree{Dir: dir, Hashed: o.Hash}
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", t.show(name), unwrapPath(err))
		}
		fi, err := d.Info()
		if err != nil {
			return fmt.Errorf("%s: %w", t.show(name), unwrapPath(err))
		}
		if fi.ModTime().After(t.Latest) {
			t.Latest = fi.ModTime()
		}
		if d.IsDir() || (o.Exclude != nil && o.Exclude(name)) {
			return nil
		}
		link := false
		switch {
		case fi.Mode().IsRegular():
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := root.Stat(name) // follows links only while they stay inside
			switch {
			case err != nil:
				return fmt.Errorf("%s: a symbolic link that leads outside the folder or nowhere; "+
					"only links to files inside the folder are followed (replace it by the file): %w", t.show(name), unwrapPath(err))
			case target.IsDir():
				return fmt.Errorf("%s: a symbolic link to a folder; only links to files inside the folder are followed", t.show(name))
			case !target.Mode().IsRegular():
				return fmt.Errorf("%s: a symbolic link to something that is not a regular file", t.show(name))
			}
			fi, link = target, true
		default:
			return fmt.Errorf("%s: not a regular file (%s); a site holds regular files only", t.show(name), kindOf(fi.Mode()))
		}
		if o.CheckName != nil {
			if err := o.CheckName(name); err != nil {
				return fmt.Errorf("%s: %w", t.show(name), err)
			}
		}
		t.Files = append(t.Files, File{Name: name, Size: fi.Size(), MTime: fi.ModTime(), Link: link})
		t.Bytes += fi.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(t.Files, func(i, j int) bool { return t.Files[i].Name < t.Files[j].Name })
	return t, nil
}

// show names a file of the tree for an error: the folder joined with it.
func (t *Tree) show(name string) string { return filepath.Join(t.Dir, filepath.FromSlash(name)) }

// unwrapPath drops a *PathError's own path (the error names the file already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "type " + m.Type().String()
}

// Result describes one complete archive written by WriteTo.
type Result struct {
	ArchiveBytes int64  // bytes of the tar.zst
	Bytes        int64  // bytes of the files, as read
	SHA256       string // TreeHash of the files as read (Options.Hash), else ""
}

// Open returns the tar.zst of t as a stream, written by a goroutine into a
// pipe as it is read. Closing the stream early stops the goroutine. done,
// when set, is called with the outcome once the archive is complete or
// failed.
func (t *Tree) Open(wrap func(io.Reader) io.Reader, done func(Result, error)) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		res, err := t.WriteTo(pw, wrap)
		if done != nil {
			done(res, err)
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// Hash is the TreeHash of the files as they are now, read without archiving.
func (t *Tree) Hash() (string, error) {
	root, err := os.OpenRoot(t.Dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	th := newTreeHash()
	for _, f := range t.Files {
		in, err := openFile(root, f.Name) // access times left alone, as WriteTo
		if err != nil {
			return "", fmt.Errorf("%s: %w", t.show(f.Name), unwrapPath(err))
		}
		h := sha256.New()
		n, err := io.Copy(h, in)
		in.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", t.show(f.Name), unwrapPath(err))
		}
		th.add(f.Name, n, h.Sum(nil))
	}
	return th.sum(), nil
}

// treeHash is the identity of a tree's content: sha256 over one line per
// file, in name order: name NUL size NUL sha256-hex LF. Names and content
// count, times and modes do not.
type treeHash struct{ h hash.Hash }

func newTreeHash() *treeHash { return &treeHash{h: sha256.New()} }

func (t *treeHash) add(name string, size int64, sum []byte) {
	io.WriteString(t.h, name+"\x00"+strconv.FormatInt(size, 10)+"\x00"+hex.EncodeToString(sum)+"\n")
}

func (t *treeHash) sum() string { return hex.EncodeToString(t.h.Sum(nil)) }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
