package report

import "context"

// FileRef is one stored object a row refers to: a report's file (Report >
// 0; a site report's manifest, StoredPath) or a project's cover (Report ==
// 0).
type FileRef struct {
	Path    string
	Project int64
	Report  int64
}

// Maintainer is the maintenance surface of a metadata store: what the
// operator commands (internal/ops: check, migrate, the orphan sweep) need
// beyond MetaStore. Both stores implement it (internal/boltstore,
// internal/pgstore); storetest.Maintenance holds them to it.
type Maintainer interface {
	MetaStore
	// Refs lists every object a row refers to: the projects' covers, then
	// the reports' stored objects.
	Refs(ctx context.Context) ([]FileRef, error)
	// CounterDrift compares the derived data (reportCount, the per-day
	// counters, indexes) with the rows.
	CounterDrift(ctx context.Context) ([]Drift, error)
	// Recount rewrites the derived data from the rows, in one
	// transaction, and returns the drift it fixed.
	Recount(ctx context.Context) ([]Drift, error)
	// DropReports deletes report rows (whose files are gone) without
	// touching the counters: call Recount afterwards. Unknown ids are
	// skipped.
	DropReports(ctx context.Context, ids []int64) error
	// ClearCover unsets a project's cover (its file is gone).
	ClearCover(ctx context.Context, project int64) error
	// BulkLoad stores projects and then reports with the ids they carry,
	// keeping counters and sequences as CreateProject and CreateReport
	// would; for seeding and migration into a store no daemon is writing.
	BulkLoad(ctx context.Context, projects []Project, reports []ReportRecord) error
	// Sequences are the last ids handed out (0: none yet), deleted rows'
	// included.
	Sequences(ctx context.Context) (project, rep int64, err error)
	// AdvanceSequences moves the id sequences past project and rep (ids
	// another store handed out), never backwards.
	AdvanceSequences(ctx context.Context, project, rep int64) error
	// DayCounts are the stored per-day counters, by project and day.
	DayCounts(ctx context.Context) ([]DayCount, error)
	// Counts is how many rows each table holds: "projects", "reports",
	// "project_days", "tokens".
	Counts(ctx context.Context) (map[string]int64, error)
	// Ping tells whether the store answers: a round trip to the server,
	// or a read transaction begun and ended; it gives up when ctx ends.
	Ping(ctx context.Context) error
}
