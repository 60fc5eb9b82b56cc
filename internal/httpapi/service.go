package httpapi

import (
	"context"
	"io"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
)

// Service is what the HTTP layer asks of the daemon's service
// (*service.Service implements it): report.Service, the API as Go that
// the client implements too, and what only a server does: staged uploads,
// opening stored bytes, printing, links and retention runs.
type Service interface {
	report.Service

	// Uploads: staged to disk first, then committed.
	Stage(r io.Reader) (*files.Staged, error)
	StagePart(r io.Reader, room int64) (*service.StagedPart, error)
	Commit(ctx context.Context, st *files.Staged, projectID int64, t report.FileType, clientName string, meta report.BuildMeta) (report.Report, error)
	CommitSite(ctx context.Context, in service.SiteUpload) (report.Report, error)
	TryStreamSite() (release func(), ok bool)
	StageSiteStream(ctx context.Context, r io.Reader, format string) (*site.Staged, error)
	Limits() (upload, cover int64)
	SiteLimits() service.SiteLimits

	// Reading stored reports and their bytes.
	ReportRecord(ctx context.Context, id int64) (report.ReportRecord, error)
	ReportProject(ctx context.Context, id int64) (int64, error)
	ReportDetail(ctx context.Context, id int64) (r report.Report, content io.ReadCloser, size int64, err error)
	OpenReport(ctx context.Context, id int64) (report.ReportRecord, blob.Object, error)
	OpenSite(ctx context.Context, id int64) (report.ReportRecord, site.View, error)
	OpenSiteFile(ctx context.Context, id int64, f site.File) (blob.Object, error)
	SiteManifest(ctx context.Context, id int64) (site.Manifest, error)
	OpenStatic(p string) (blob.Object, error)

	// Printing (internal/convert behind the service).
	PDF(ctx context.Context, id int64, opts report.PrintOptions) (report.ReportRecord, blob.Object, error)
	PDFGeneration() string
	MarkdownHTML(ctx context.Context, id int64, fresh func(report.ReportRecord) bool) (report.ReportRecord, []byte, error)

	// Stable links (/p/) and badges.
	ResolveProject(ctx context.Context, ref string, visible func(int64) bool) (int64, error)
	Latest(ctx context.Context, q report.LatestQuery) (report.Report, error)

	// History, comparisons and per-test results (trend charts, /compare).
	History(ctx context.Context, q report.HistoryQuery) ([]report.HistoryPoint, error)
	Compare(ctx context.Context, id int64, base string) (report.Comparison, error)
	Results(ctx context.Context, id int64) (*report.Results, error)

	// Retention runs (the policy itself is in report.Service).
	Prune(ctx context.Context, req service.PruneRequest) (report.PruneResult, error)
}

var _ Service = (*service.Service)(nil)
