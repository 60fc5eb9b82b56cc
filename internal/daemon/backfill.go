package daemon

import (
	"context"
	"log/slog"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/service"
)

// BackfillResults opens the stores cfg names (the registry, stores.go) and
// reads and stores per-test results for the existing reports that have
// none (service.BackfillResults): with a store one process holds (bolt)
// the daemon must be stopped (bbolt's lock), with a shared one (postgres)
// it may keep serving. each is told every report's outcome.
func BackfillResults(ctx context.Context, cfg config.Config, log *slog.Logger, each func(id int64, outcome string)) (service.BackfillCounts, error) {
	st, err := openAdmin(ctx, cfg, forAdmin)
	if err != nil {
		return service.BackfillCounts{}, err
	}
	defer st.Close()
	sc := service.Config{Clock: st.clock, Logger: log, Blobs: st.files}
	return service.New(sc, st.meta, st.dir, nil).BackfillResults(ctx, each)
}
