package daemon

import (
	"context"
	"log/slog"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// BackfillResults reads and stores per-test results for the existing
// reports that have none (service.BackfillResults): with storage bolt the
// daemon must be stopped (bbolt's lock), with postgres it may keep
// serving. each is told every report's outcome.
func BackfillResults(ctx context.Context, cfg config.Config, log *slog.Logger, each func(id int64, outcome string)) (service.BackfillCounts, error) {
	loc, err := cfg.Location()
	if err != nil {
		return service.BackfillCounts{}, err
	}
	clock := report.Clock{Location: loc}
	sc := service.Config{Clock: clock, Logger: log}
	var meta report.MetaStore
	if cfg.OnPostgres() {
		if err := cfg.ValidateStorage(); err != nil {
			return service.BackfillCounts{}, err
		}
		pg, err := openPostgres(ctx, cfg, clock)
		if err != nil {
			return service.BackfillCounts{}, err
		}
		defer pg.Close()
		meta = pg
		if cfg.OnS3() {
			if sc.Blobs, err = openS3(ctx, cfg); err != nil {
				return service.BackfillCounts{}, err
			}
		}
	} else {
		db, err := existingStore(cfg)
		if err != nil {
			return service.BackfillCounts{}, err
		}
		bolt, err := boltstore.Open(db, clock)
		if err != nil {
			return service.BackfillCounts{}, err
		}
		defer bolt.Close()
		meta = bolt
	}
	var dir *files.Dir
	if sc.Blobs == nil {
		if dir, err = files.Open(cfg.DataDir); err != nil {
			return service.BackfillCounts{}, err
		}
		defer dir.Close()
	}
	return service.New(sc, meta, dir, nil).BackfillResults(ctx, each)
}
