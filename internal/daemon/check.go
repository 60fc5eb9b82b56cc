package daemon

import (
	"context"
	"path/filepath"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
)

// CheckReport is what `reportd check` found and, with --repair, did.
type CheckReport = ops.CheckReport

// Check opens the stores cfg names (the registry, stores.go) and runs
// `reportd check` on them (ops.Check). With a store one process holds
// (bolt) the daemon must not be running, which the store's lock enforces:
// an upload between its rename and its commit would look like an orphan.
// Shared stores (postgres) are checked beside the running daemons.
func Check(ctx context.Context, cfg config.Config, repair bool) (CheckReport, error) {
	mode := forReadOnly
	if repair {
		mode = forAdmin
	}
	st, err := openAdmin(ctx, cfg, mode)
	if err != nil {
		return CheckReport{}, err
	}
	defer st.Close()
	return ops.Check(ctx, checkStores(st.backend, st.meta, st.files, st.dir), repair)
}

// checkStores are the stores of a check: with a store one process holds,
// the check also lists data_dir/tmp and names orphans relative to data_dir.
func checkStores(meta metaBackend, store report.Maintainer, fs blob.Store, dir *files.Dir) ops.Stores {
	st := ops.Stores{Meta: store, Files: fs, Shared: meta.shared}
	if !meta.shared && dir != nil {
		st.DataDir, st.StagingDir = dir.Base(), filepath.Join(dir.Base(), "tmp")
	}
	return st
}
