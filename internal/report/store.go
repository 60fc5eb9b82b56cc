package report

import (
	"context"
	"strconv"
	"time"
)

// ReportRecord is a stored report: the API object plus what only the daemon
// needs. FileContent is always nil in a record.
type ReportRecord struct {
	Report
	Size   int64
	SHA256 string // hex digest of the stored bytes (sites: "")
	// Results, when non-nil on CreateReport, are stored with the row in
	// its transaction; reads leave it nil (MetaStore.Results reads them).
	Results *Results
}

// SitesPrefix is the API path prefix of site reports: a site's filePath is
// SitesPrefix + "<id>/<entry>", and its manifest is stored at
// SitesPrefix + "<id>.json" (site.ManifestKey below /uploads/).
const SitesPrefix = "/uploads/sites/"

// SiteFilePath is the filePath of site report id opening at entry.
func SiteFilePath(id int64, entry string) string {
	return SitesPrefix + strconv.FormatInt(id, 10) + "/" + entry
}

// SiteManifestPath is the API path of site report id's manifest.
func SiteManifestPath(id int64) string {
	return SitesPrefix + strconv.FormatInt(id, 10) + ".json"
}

// StoredPath is the stored object that the row owns (what FilePaths
// reports, the start-up sweep keeps and checks look for): the file of a
// single-file report, the manifest of a site.
func (r ReportRecord) StoredPath() string {
	if r.Kind == KindSite {
		return SiteManifestPath(r.ID)
	}
	return r.FilePath
}

// ProjectChange is an update to a project row; nil fields stay unchanged.
type ProjectChange struct {
	Name *string
	// Slug, when non-nil, replaces the slug (CheckSlug'd); a slug another
	// project has is a ValidationError (SlugTaken).
	Slug        *string
	Description *string
	CoverImage  *string
	// Retention, when non-nil, replaces the stored policy (a zero
	// Retention removes it).
	Retention *Retention
}

// ReportChange is an update to a report row; nil fields stay unchanged.
type ReportChange struct {
	FileName *string
	FileType *FileType
	FilePath *string
	// Build metadata: a pointer to "" clears the field.
	Meta BuildMeta
}

// MetaStore keeps projects, reports, the per-project index and the counters.
// bbolt implements it (internal/boltstore); a PostgreSQL one can follow. The
// conformance suite in internal/storetest runs against any implementation.
//
// Ids are reserved before files are placed, so that a file's final path can
// carry its id and the row is committed only after the file is durable.
type MetaStore interface {
	NextProjectID(ctx context.Context) (int64, error)
	// CreateProject stores p with the reserved p.ID; counts are ignored.
	// p.Slug is where its slug starts: the store stores the first of
	// p.Slug, p.Slug-2, p.Slug-3… that no project has (UniqueSlug), in
	// the transaction that creates the row.
	CreateProject(ctx context.Context, p Project) (Project, error)
	Project(ctx context.Context, id int64) (Project, error)
	// ProjectBySlug is the project with that slug (an index lookup);
	// NotFound when none has it.
	ProjectBySlug(ctx context.Context, slug string) (Project, error)
	Projects(ctx context.Context) ([]Project, error)
	// UpdateProject returns the new project and the cover it replaced, if any.
	UpdateProject(ctx context.Context, id int64, c ProjectChange) (p Project, oldCover *string, err error)
	// DeleteProject removes the project, its reports, index and counters in
	// one transaction and returns what was removed so the caller can delete files.
	DeleteProject(ctx context.Context, id int64) (p Project, reports []ReportRecord, err error)

	NextReportID(ctx context.Context) (int64, error)
	// CreateReport stores r (r.ID reserved) and keeps the counters exact;
	// NotFound when the project no longer exists.
	CreateReport(ctx context.Context, r ReportRecord) (ReportRecord, error)
	Report(ctx context.Context, id int64) (ReportRecord, error)
	// Reports lists every report, or one project's, by id ascending.
	Reports(ctx context.Context, projectID *int64) ([]ReportRecord, error)
	UpdateReport(ctx context.Context, id int64, c ReportChange) (ReportRecord, error)
	DeleteReport(ctx context.Context, id int64) (ReportRecord, error)
	// Latest is the newest report (highest id) of q.Project matching q's
	// name and branch (nil: any; a branch of "" matches reports without
	// one), found through an index kept with the rows, never a scan of
	// reports, whichever fields are set; NotFound when there is none.
	Latest(ctx context.Context, q LatestQuery) (ReportRecord, error)
	// History is the newest q.Limit reports of q's name (and branch),
	// oldest first, read through the name (+ branch) index of Latest.
	History(ctx context.Context, q HistoryQuery) ([]ReportRecord, error)
	// Results is report id's per-test results; nil (no error) when none
	// are stored, NotFound when the report does not exist.
	Results(ctx context.Context, id int64) (*Results, error)
	// SetResults stores (replaces) report id's results; nil removes them.
	// NotFound when the report does not exist. Results go with the
	// report when it is deleted.
	SetResults(ctx context.Context, id int64, r *Results) error

	// FilePaths calls fn with every file path that a row refers to
	// (report files and covers; a site report's manifest,
	// ReportRecord.StoredPath), for the start-up sweep and checks.
	FilePaths(ctx context.Context, fn func(path string) error) error
	Close() error
}

// Clock gives the store "now" and the zone in which a day starts.
type Clock struct {
	Location *time.Location
	Now      func() time.Time
}

// Today is the current date in the clock's zone.
func (c Clock) Today() time.Time { return c.Date(c.now()) }

// Date truncates t to its date in the clock's zone.
func (c Clock) Date(t time.Time) time.Time {
	y, m, d := t.In(c.loc()).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, c.loc())
}

// Local returns t in the clock's zone, truncated to seconds (the API's precision).
func (c Clock) Local(t time.Time) time.Time { return t.In(c.loc()).Truncate(time.Second) }

func (c Clock) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// NowLocal is now in the clock's zone, at the API's precision.
func (c Clock) NowLocal() time.Time { return c.Local(c.now()) }

func (c Clock) loc() *time.Location {
	if c.Location == nil {
		return time.Local
	}
	return c.Location
}
