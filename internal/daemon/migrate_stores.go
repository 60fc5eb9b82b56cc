package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// MigrateOptions says where `reportd migrate` copies from (From: the data
// directory of the bbolt deployment, whose daemon must be stopped).
type MigrateOptions = ops.MigrateOptions

// MigrateSummary is what a migration did and verified.
type MigrateSummary = ops.MigrateSummary

// Refusals of `reportd migrate` (exit status 2, nothing written).
var (
	errMigrateNotEmpty = ops.ErrMigrateNotEmpty
	errMigrateStorage  = errors.New("reportd migrate copies into storage: postgres or postgres+s3: give the target's storage, postgres.* (and s3.*) keys as for reportd serve")
)

// Refused marks an error of `reportd migrate` that stopped it before it
// wrote anything (exit status 2): settings, a source in use, a non-empty
// target.
type Refused struct{ error }

func (r Refused) Unwrap() error { return r.error }

// Migrate opens the bbolt deployment at opt.From (read-only) and the
// target cfg names (through the registry, stores.go: metadata_store:
// postgres, file_store: local or s3), and runs ops.Migrate between them.
func Migrate(ctx context.Context, cfg config.Config, opt MigrateOptions) (sum MigrateSummary, err error) {
	if err := cfg.ValidateStorage(); err != nil {
		return sum, Refused{err}
	}
	meta := metaBackendOf(&cfg)
	if !meta.shared {
		return sum, Refused{errMigrateStorage}
	}
	loc, err := cfg.Location()
	if err != nil {
		return sum, Refused{err}
	}
	clock := report.Clock{Location: loc}

	from, err := filepath.Abs(opt.From)
	if err != nil {
		return sum, err
	}
	dbPath := filepath.Join(from, "reportd.db")
	if _, err := os.Stat(dbPath); err != nil {
		return sum, Refused{fmt.Errorf("--from: no bbolt store at %s: %w", dbPath, err)}
	}
	src, err := boltstore.OpenReadOnly(dbPath, clock, time.Second)
	if err != nil {
		if errors.Is(err, boltstore.ErrLocked) {
			return sum, Refused{fmt.Errorf("--from: %w: stop the bbolt daemon before migrating", err)}
		}
		return sum, err
	}
	defer src.Close()
	srcDir, err := files.Open(from)
	if err != nil {
		return sum, err
	}
	defer srcDir.Close()

	dst, err := meta.open(ctx, cfg, clock, forAdmin)
	if err != nil {
		return sum, err
	}
	defer dst.Close()
	dstTokens, ok := dst.(tokens.Store)
	if !ok {
		return sum, fmt.Errorf("migrate: metadata_store %s keeps no tokens", meta.name)
	}
	var dstFiles blob.Store
	if fb := fileBackendOf(&cfg); fb.local {
		to, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return sum, err
		}
		if to == from {
			opt.SameFiles, dstFiles = true, srcDir.Blobs()
		} else {
			dstDir, err := files.Open(to)
			if err != nil {
				return sum, err
			}
			defer dstDir.Close()
			dstFiles = dstDir.Blobs()
		}
	} else if dstFiles, err = fb.open(ctx, cfg, nil); err != nil {
		return sum, err
	}
	sum, err = ops.Migrate(ctx, ops.MigrateStores{Meta: src, Tokens: src, Files: srcDir.Blobs()},
		ops.MigrateStores{Meta: dst, Tokens: dstTokens, Files: dstFiles}, opt)
	sum.TargetStorage = cfg.StorageName()
	if errors.Is(err, ops.ErrMigrateNotEmpty) {
		err = Refused{err}
	}
	return sum, err
}
