// Package blob is reportd's one storage interface for file bytes: immutable
// objects by key, written whole and atomically, read with ranges. The local
// directory (internal/blob/local) and an S3 bucket (internal/blob/s3store)
// implement it; the content-addressed report sites (internal/site) are
// stored through it.
//
// Keys are relative slash paths ("reports/7.pdf", "covers/3/logo.png"),
// validated by CheckKey in one place. Errors carry a report.Kind so the API
// answers as before: a missing key is NotFound (errors.Is ErrNotFound), a
// refused conditional create is ErrExists, a bad key is ErrInvalidKey.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Store holds immutable objects by key. It is safe for concurrent use;
// concurrent Puts of one key end with one of them whole.
type Store interface {
	// Put streams r into key. The object becomes visible only once it is
	// complete (a reader sees the old object or none, never part of the
	// new one) and is durable when Put returns nil. With IfNoneMatch an
	// existing key is left untouched and Put fails with ErrExists. A Put
	// that fails (reader error, cancelled ctx, wrong size) leaves nothing
	// visible and the previous object, if any, intact.
	Put(ctx context.Context, key string, r io.Reader, opt PutOptions) (Info, error)
	// Open opens key for reading; the Object seeks, for ranged reads.
	Open(ctx context.Context, key string) (Object, error)
	// Stat describes key without opening it.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes key; a missing key is not an error. It need not be
	// durable: callers delete after committing the row, and a sweep
	// removes whatever a crash leaves unreferenced.
	Delete(ctx context.Context, key string) error
	// Walk calls fn for every complete object whose key starts with
	// prefix ("" is all), in no particular order. An error from fn stops
	// the walk and is returned.
	Walk(ctx context.Context, prefix string, fn func(Info) error) error
}

// PutOptions tunes one Put.
type PutOptions struct {
	// IfNoneMatch creates key only if it does not exist yet (ErrExists
	// otherwise): a content-addressed or shared object is never overwritten.
	IfNoneMatch bool
	// Size, if > 0, is the exact length r yields; a reader giving more or
	// fewer bytes fails the Put. 0 means unknown (stores stream it in parts).
	Size int64
	// ContentType is stored where the store keeps one (S3); local ignores it.
	ContentType string
	// SHA256 is the hex sha256 of the bytes, if known. Where it is the
	// key's last segment (a content-addressed object), a local batch may
	// write the object in place (blob/local's direct.go).
	SHA256 string
}

// Info describes a stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
	// ETag is the store's opaque version tag ("" where the store has none).
	ETag string
}

// Object is an open object: a seekable reader for http.ServeContent, and
// ReadAt for checks that read a file's parts out of order (zip-based
// decks). Both read the object as it was when opened.
type Object interface {
	io.ReadSeekCloser
	io.ReaderAt
	Info() Info
}

// Optional fast paths. A store offers what it can do cheaper than the
// generic Put/Open; the helpers below fall back to the interface.

// Filer is an Object backed by an *os.File, so net/http can send it with
// sendfile(2) (the local store).
type Filer interface {
	File() *os.File
}

// Adopter takes over a complete, already fsynced local file (an upload
// staged in the same file system) by rename instead of copying it.
type Adopter interface {
	// Adopt moves the file at path to key durably. On success path is gone;
	// on failure it is left for the caller to remove.
	Adopt(ctx context.Context, key, path string, opt PutOptions) (Info, error)
}

// Copier gives an object a second key without moving bytes through the
// caller (local: a hard link; S3: CopyObject). An existing dst is refused
// with ErrExists.
type Copier interface {
	Copy(ctx context.Context, src, dst string) error
}

// PrefixDeleter removes every object below prefix at once.
type PrefixDeleter interface {
	DeletePrefix(ctx context.Context, prefix string) error
}

// Pather names the local file behind a key, for engines that take paths.
type Pather interface {
	LocalPath(key string) (string, error)
}

// Sentinels, matched with errors.Is. Returned errors also carry a
// report.Kind (NotFound, Storage, Validation).
var (
	ErrNotFound   = errors.New("blob: object not found")
	ErrExists     = errors.New("blob: object already exists")
	ErrInvalidKey = errors.New("blob: invalid key")
)

// NotFound is the error for a missing key.
func NotFound(key string) error {
	return report.Wrap(report.NotFound, fmt.Errorf("%w: %q", ErrNotFound, key), "file not found")
}

// Exists is the error for a refused conditional create.
func Exists(key string) error {
	return report.Wrap(report.Storage, fmt.Errorf("%w: %q", ErrExists, key), "the file already exists")
}

// StorageErr wraps a store failure for the API (kind Storage).
func StorageErr(err error, msg string) error {
	if err == nil {
		return nil
	}
	var re *report.Error
	if errors.As(err, &re) {
		return err
	}
	return report.Wrap(report.Storage, err, msg)
}

// MaxKeyLen bounds keys (S3 allows 1024 bytes).
const MaxKeyLen = 1024

// CheckKey accepts a relative slash path of non-empty segments: no leading
// or trailing slash, no "." or ".." segment, no backslash, no NUL or other
// control character, at most MaxKeyLen bytes. Every store calls it first.
func CheckKey(key string) error {
	bad := func(why string) error {
		return report.Wrap(report.Validation, fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why), "invalid file name")
	}
	if key == "" {
		return bad("empty")
	}
	if len(key) > MaxKeyLen {
		return bad("too long")
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return bad("control character or backslash")
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return bad("empty segment or leading/trailing slash")
		case ".", "..":
			return bad("dot segment")
		}
	}
	return nil
}

// CheckPrefix accepts "" or a key prefix: a key, optionally with a
// trailing slash.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return CheckKey(strings.TrimSuffix(prefix, "/"))
}

// OSFile returns the *os.File behind o, if the store has one.
func OSFile(o Object) (*os.File, bool) {
	if f, ok := o.(Filer); ok && f.File() != nil {
		return f.File(), true
	}
	return nil, false
}

// PutFile stores the complete local file at path under key: where the
// store can adopt it, by fsync and rename (the file is then gone), else by
// streaming it with Put (the file stays; the caller removes it). Callers
// need not fsync the file: only adoption needs it, and PutFile does it.
func PutFile(ctx context.Context, s Store, key, path string, opt PutOptions) (Info, error) {
	if a, ok := s.(Adopter); ok {
		if err := syncFile(path); err != nil {
			return Info{}, StorageErr(err, "cannot store the file")
		}
		return a.Adopt(ctx, key, path, opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return Info{}, StorageErr(err, "cannot store the file")
	}
	defer f.Close()
	if opt.Size == 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
			opt.Size = fi.Size()
		}
	}
	return s.Put(ctx, key, f, opt)
}

// Copy gives src's object a second key dst (which must not exist:
// ErrExists), with the store's Copier if it has one, else by streaming it.
func Copy(ctx context.Context, s Store, src, dst string) error {
	if c, ok := s.(Copier); ok {
		return c.Copy(ctx, src, dst)
	}
	o, err := s.Open(ctx, src)
	if err != nil {
		return err
	}
	defer o.Close()
	_, err = s.Put(ctx, dst, o, PutOptions{Size: o.Info().Size, IfNoneMatch: true})
	return err
}

// DeletePrefix removes every object whose key starts with prefix, with the
// store's PrefixDeleter if it has one.
func DeletePrefix(ctx context.Context, s Store, prefix string) error {
	if err := CheckPrefix(prefix); err != nil {
		return err
	}
	if prefix == "" {
		return report.Wrap(report.Validation, fmt.Errorf("%w: empty prefix", ErrInvalidKey), "invalid file name")
	}
	if d, ok := s.(PrefixDeleter); ok {
		return d.DeletePrefix(ctx, prefix)
	}
	var keys []string
	if err := s.Walk(ctx, prefix, func(i Info) error { keys = append(keys, i.Key); return nil }); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// ContextReader reads r until ctx is done, then fails every read with
// ctx's error, so a cancelled Put stops reading at once.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
