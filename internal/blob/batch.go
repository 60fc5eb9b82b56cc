package blob

import (
	"context"
	"io"
)

// Batcher is the optional fast path of a store that can make many new
// objects durable together, cheaper than one durable Put each (local: one
// syncfs(2) for all of them instead of an fsync of every file and
// directory). Stores without it (S3) are written with parallel Puts.
type Batcher interface {
	// NewBatch starts a batch, staged in the store's own temp directory
	// (on the store's file system, so one flush covers every object).
	NewBatch() Batch
}

// Batch creates objects that become visible only at Commit, each under its
// key with IfNoneMatch semantics: a key that exists already is left
// untouched and is not an error (the batch is meant for content-addressed
// objects, where an existing object is the same bytes). Put and Adopt are
// safe for concurrent use; Commit and Discard are called once, after them.
//
// Crash safety: no object is relied on under its key before its bytes are
// durable, and Commit returns nil only once every object is durable and
// visible. A crash before or during Commit leaves staged temp files (the
// store's owner sweeps its temp directory at start-up) and, at worst, some
// complete objects already linked under their keys, never a partial one
// that anyone takes for the object. (The local store writes content
// objects in place, marked pending until the commit: see its direct.go.)
type Batch interface {
	// Put stages r as key's object (opt.Size, if > 0, is checked).
	Put(ctx context.Context, key string, r io.Reader, opt PutOptions) error
	// Adopt stages the complete local file at path as key's object; the
	// batch owns it from then on (path is gone, whatever the outcome).
	Adopt(ctx context.Context, key, path string, opt PutOptions) error
	// Commit makes every staged object durable, then visible, then its
	// directory entries durable.
	Commit(ctx context.Context) error
	// Discard drops whatever was staged and not committed; safe after
	// Commit.
	Discard()
}

// BatchOpener is a Batch that can read what it staged before Commit (the
// local store's): Open returns key's staged object, or else the store's
// (during or after Commit the staged file may have become it).
type BatchOpener interface {
	Open(ctx context.Context, key string) (Object, error)
}

// BatchStater is a Batch that tells which objects it may rely on (the
// local store's): Stat as the store's, except that an object another
// batch is still writing is missing (the batch then writes its own copy).
type BatchStater interface {
	Stat(ctx context.Context, key string) (Info, error)
}
