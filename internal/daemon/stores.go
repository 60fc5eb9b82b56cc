package daemon

import (
	"context"
	"path/filepath"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
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
	open func(ctx context.Context, c config.Config, clock report.Clock, mode openMode) (report.Maintainer, error)
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
	open func(ctx context.Context, c config.Config, dir *files.Dir) (blob.Store, error)
}

var metaBackends = []metaBackend{
	{name: "bolt", file: "reportd.db", kind: "bbolt", inProcess: true, check: checkBolt, open: func(ctx context.Context, c config.Config, clock report.Clock, mode openMode) (report.Maintainer, error) {
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
	{name: "postgres", shared: true, kind: "postgres", check: checkPostgres, open: func(ctx context.Context, c config.Config, clock report.Clock, _ openMode) (report.Maintainer, error) {
		return opened[*pgstore.Store, report.Maintainer](openPostgres(ctx, c, clock))
	}},
}

var fileBackends = []fileBackend{
	{name: "local", local: true, open: func(_ context.Context, _ config.Config, dir *files.Dir) (blob.Store, error) { return dir.Blobs(), nil }},
	{name: "s3", open: func(ctx context.Context, c config.Config, _ *files.Dir) (blob.Store, error) {
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

// metaBackend is the metadata store c names (stores must have passed).
func metaBackendOf(c *config.Config) metaBackend {
	meta, _, _ := c.Stores()
	for _, b := range metaBackends {
		if b.name == meta {
			return b
		}
	}
	panic("reportd: no metadata store " + meta)
}

// fileBackend is the file store c names (stores must have passed).
func fileBackendOf(c *config.Config) fileBackend {
	_, file, _ := c.Stores()
	for _, b := range fileBackends {
		if b.name == file {
			return b
		}
	}
	panic("reportd: no file store " + file)
}

// adminStores are the stores an operator command (check, backfill-results)
// opened through the registry.
type adminStores struct {
	backend metaBackend
	clock   report.Clock
	meta    report.Maintainer
	// dir is data_dir's files.Dir with a local file store; otherwise nil.
	dir   *files.Dir
	files blob.Store
}

// openAdmin opens the metadata and file stores cfg names for an operator
// command, through the registry: a store one process holds (bolt) must
// exist and is locked against a running daemon (its lock error says so);
// a shared store (postgres) may keep serving. Close releases them.
func openAdmin(ctx context.Context, cfg config.Config, mode openMode) (_ adminStores, err error) {
	if err := cfg.ValidateStorage(); err != nil {
		return adminStores{}, err
	}
	loc, err := cfg.Location()
	if err != nil {
		return adminStores{}, err
	}
	a := adminStores{backend: metaBackendOf(&cfg), clock: report.Clock{Location: loc}}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.meta, err = a.backend.open(ctx, cfg, a.clock, mode); err != nil {
		return adminStores{}, err
	}
	fb := fileBackendOf(&cfg)
	if fb.local {
		if a.dir, err = files.Open(cfg.DataDir); err != nil {
			return adminStores{}, err
		}
	}
	if a.files, err = fb.open(ctx, cfg, a.dir); err != nil {
		return adminStores{}, err
	}
	return a, nil
}

// Close closes the stores openAdmin opened.
func (a adminStores) Close() {
	if a.dir != nil {
		a.dir.Close()
	}
	if a.meta != nil {
		a.meta.Close()
	}
}
