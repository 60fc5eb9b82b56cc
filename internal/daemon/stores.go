package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
)

// The storage registry: the metadata stores (metadata_store:) and the file
// stores (file_store:) reportd can open, by name, in the manner of restic's
// location registry. A new backend is one entry here plus its package
// (docs/architecture.md, "Adding a storage backend").

// metaBackend is one metadata store.
type metaBackend struct {
	name string
	// shared: several daemons and the operator commands use the store at
	// once (PostgreSQL); otherwise one process holds it (bbolt's lock).
	shared bool
	// file is the store's file in data_dir (reportd_store_db_bytes);
	// "": none.
	file string
	// health is the store's readiness dependency (kind, and a check that
	// answers a reason with its error); inProcess: the store lives in the
	// process, so liveness vouches for it too.
	kind      string
	inProcess bool
	check     func(ctx context.Context, store report.Maintainer) (string, error)
	// open opens the store of c for mode.
	open func(ctx context.Context, c Config, clock report.Clock, mode openMode) (report.Maintainer, error)
}

// openMode is what a store is opened for.
type openMode int

const (
	forServe    openMode = iota // reportd serve: create the store if there is none
	forAdmin                    // an operator command that writes: the store must exist
	forReadOnly                 // an operator command that only reads (check without --repair)
)

// fileBackend is one file store: where report files and covers live.
type fileBackend struct {
	name string
	// local: the files live in data_dir (uploads/), and open needs its
	// files.Dir; otherwise open ignores dir (nil is fine).
	local bool
	// open opens the file store of c.
	open func(ctx context.Context, c Config, dir *files.Dir) (blob.Store, error)
}

var metaBackends = []metaBackend{
	{name: "bolt", file: "reportd.db", kind: "bbolt", inProcess: true, check: checkBolt, open: func(ctx context.Context, c Config, clock report.Clock, mode openMode) (report.Maintainer, error) {
		if mode == forServe {
			return opened[*boltstore.Store, report.Maintainer](boltstore.Open(filepath.Join(c.DataDir, "reportd.db"), clock))
		}
		path, err := existingStore(c) // an operator command never creates one
		if err != nil {
			return nil, err
		}
		if mode == forReadOnly {
			return opened[*boltstore.Store, report.Maintainer](boltstore.OpenReadOnly(path, clock, time.Second))
		}
		return opened[*boltstore.Store, report.Maintainer](boltstore.Open(path, clock))
	}},
	{name: "postgres", shared: true, kind: "postgres", check: checkPostgres, open: func(ctx context.Context, c Config, clock report.Clock, _ openMode) (report.Maintainer, error) {
		return opened[*pgstore.Store, report.Maintainer](openPostgres(ctx, c, clock))
	}},
}

var fileBackends = []fileBackend{
	{name: "local", local: true, open: func(_ context.Context, _ Config, dir *files.Dir) (blob.Store, error) { return dir.Blobs(), nil }},
	{name: "s3", open: func(ctx context.Context, c Config, _ *files.Dir) (blob.Store, error) {
		return opened[*s3store.Store, blob.Store](openS3(ctx, c))
	}},
}

// opened is a store as an interface: nil (never a typed nil) with an
// error.
func opened[T, I any](s T, err error) (I, error) {
	var zero I
	if err != nil {
		return zero, err
	}
	return any(s).(I), nil
}

// storageShorthands are the values of storage:, each a metadata store and
// a file store.
var storageShorthands = map[string][2]string{
	"bolt":        {"bolt", "local"},
	"postgres":    {"postgres", "local"},
	"postgres+s3": {"postgres", "s3"},
}

// Unset metadata_store and file_store (and no storage:) mean these.
const (
	defaultMetaStore = "bolt"
	defaultFileStore = "local"
)

func metaBackendNames() []string {
	var out []string
	for _, b := range metaBackends {
		out = append(out, b.name)
	}
	return out
}

func fileBackendNames() []string {
	var out []string
	for _, b := range fileBackends {
		out = append(out, b.name)
	}
	return out
}

// stores resolves storage:, metadata_store: and file_store: to the names
// of the two stores. A key the shorthand contradicts is an error naming
// both values; metadata_store: bolt with file_store: s3 is refused (the
// bucket's sweep and shared PDF cache lock through PostgreSQL).
func (c *Config) stores() (meta, file string, err error) {
	meta, file = c.MetadataStore, c.FileStore
	if c.Storage != "" {
		pair, ok := storageShorthands[c.Storage]
		if !ok {
			return "", "", fmt.Errorf("storage must be bolt, postgres or postgres+s3, not %q", c.Storage)
		}
		if meta != "" && meta != pair[0] {
			return "", "", fmt.Errorf("storage: %s and metadata_store: %s disagree (storage: %s means metadata_store: %s, file_store: %s): set one or the other", c.Storage, meta, c.Storage, pair[0], pair[1])
		}
		if file != "" && file != pair[1] {
			return "", "", fmt.Errorf("storage: %s and file_store: %s disagree (storage: %s means metadata_store: %s, file_store: %s): set one or the other", c.Storage, file, c.Storage, pair[0], pair[1])
		}
		meta, file = pair[0], pair[1]
	}
	if meta == "" {
		meta = defaultMetaStore
	}
	if file == "" {
		file = defaultFileStore
	}
	if meta == "bolt" && file == "s3" {
		return "", "", fmt.Errorf("metadata_store: bolt with file_store: s3 is not supported: the bucket's sweep and its shared PDF cache take their locks in PostgreSQL; use metadata_store: postgres (storage: postgres+s3)")
	}
	return meta, file, nil
}

// storageName is the stores as one name for messages and logs: the
// storage: shorthand they amount to ("bolt", "postgres", "postgres+s3").
func (c *Config) storageName() string {
	meta, file, err := c.stores()
	if err != nil {
		return c.Storage
	}
	for name, pair := range storageShorthands {
		if pair == [2]string{meta, file} {
			return name
		}
	}
	return meta + "+" + file
}

// metaBackend is the metadata store c names (stores must have passed).
func (c *Config) metaBackend() metaBackend {
	meta, _, _ := c.stores()
	for _, b := range metaBackends {
		if b.name == meta {
			return b
		}
	}
	panic("reportd: no metadata store " + meta)
}

// fileBackend is the file store c names (stores must have passed).
func (c *Config) fileBackend() fileBackend {
	_, file, _ := c.stores()
	for _, b := range fileBackends {
		if b.name == file {
			return b
		}
	}
	panic("reportd: no file store " + file)
}
