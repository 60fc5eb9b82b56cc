package watch

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
	"sync"
)

// moveInto moves path (under root) into dir, keeping its path relative to
// root and never overwriting: a name taken already gets a numeric suffix.
func moveInto(root, path, dir string) (string, error) {
	rel, ok := relTo(root, path)
	if !ok {
		rel = filepath.Base(path)
	}
	dest := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", err
	}
	ext := filepath.Ext(dest)
	stem := dest[:len(dest)-len(ext)]
	for i := 1; ; i++ {
		if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dest = fmt.Sprintf("%s.%d%s", stem, i, ext)
	}
	if err := os.Rename(path, dest); err != nil {
		// Another file system: copy, then remove.
		if cerr := copyFile(path, dest); cerr != nil {
			return "", err
		}
		if err := os.Remove(path); err != nil {
			return "", err
		}
	}
	return dest, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(to)
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// hashingSource is the upload's Open: every retry re-opens the file from the
// start, and the bytes of the last complete read are hashed, so the state
// file records exactly what the server received.
type hashingSource struct {
	path string
	mu   sync.Mutex
	sum  string
	size int64
	done bool
	lerr error
}

func (s *hashingSource) open() (io.ReadCloser, error) {
	f, err := os.Open(s.path)
	s.mu.Lock()
	s.lerr, s.done = err, false
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &hashingReader{f: f, h: sha256.New(), src: s}, nil
}

func (s *hashingSource) sent() (string, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum, s.size, s.done
}

func (s *hashingSource) localErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lerr
}

type hashingReader struct {
	f   *os.File
	h   hash.Hash
	n   int64
	src *hashingSource
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	switch {
	case err == io.EOF:
		r.src.mu.Lock()
		r.src.sum, r.src.size, r.src.done = hex.EncodeToString(r.h.Sum(nil)), r.n, true
		r.src.mu.Unlock()
	case err != nil:
		r.src.mu.Lock()
		r.src.lerr = err
		r.src.mu.Unlock()
	}
	return n, err
}

func (r *hashingReader) Close() error { return r.f.Close() }
