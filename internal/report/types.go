package report

import (
	"context"
	"io"
	"time"
)

// Project is the API's project object. Description and CoverImage are null
// when unset, never missing (DESIGN.md).
type Project struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Slug names the project in stable links (/p/{slug}/latest): set at
	// creation from the name (Slugify, unique), kept when the project is
	// renamed; PUT may set another unique one. Not in the seed spec
	// (additive).
	Slug            string    `json:"slug"`
	Description     *string   `json:"description"`
	CreatedAt       LocalTime `json:"createdAt"`
	CoverImage      *string   `json:"coverImage"`
	ReportCount     int64     `json:"reportCount"`
	TodayNewReports int64     `json:"todayNewReports"`
	// Retention is the project's own retention policy (not in the seed
	// spec, additive); null when it has none and the server default applies.
	Retention *Retention `json:"retention"`
}

// Report is the API's report object. FileContent is null in lists and in
// POST/PUT responses; in the detail it holds the text of html and md files.
type Report struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"projectId"`
	FileName    string    `json:"fileName"`
	FileType    FileType  `json:"fileType"`
	FilePath    string    `json:"filePath"`
	UploadTime  LocalTime `json:"uploadTime"`
	FileContent *string   `json:"fileContent"`
	// Build metadata (not in the seed spec, additive). Name is a stable
	// report name such as "coverage", derived from the file name when the
	// upload gave none; the others are null when unset.
	Name     string  `json:"name"`
	Branch   *string `json:"branch"`
	Commit   *string `json:"commit"`
	BuildURL *string `json:"buildUrl"`
	BuildID  *string `json:"buildId"`
	// Generator is the tool that wrote the report ("coverage.py",
	// "mochawesome", "pytest-html", "jacoco", "istanbul") and Summary its
	// headline figures, when the upload was recognised; omitted otherwise.
	Generator string   `json:"generator,omitempty"`
	Summary   *Summary `json:"summary,omitempty"`
	// Kind is KindFile for a report of one file, KindSite for a site (a
	// whole folder of files, served from the content origin); always set.
	// A site's Entry is its entry page relative to the site root ("" when
	// it has none and a generated listing stands in), Files its number of
	// files and Bytes their total size; all three are omitted for files.
	Kind  string `json:"kind"`
	Entry string `json:"entry,omitempty"`
	Files int    `json:"files,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
	// SiteURL is the absolute URL that opens the report on the content
	// origin (signed when auth is on), filled in by the HTTP layer for
	// sites and single-file html reports when a content origin exists.
	SiteURL string `json:"siteUrl,omitempty"`
	// DashboardURL is the absolute link to the report's dashboard page,
	// filled in by the HTTP layer (public_url, or the request's host).
	DashboardURL string `json:"dashboardUrl,omitempty"`
	// FileContentOmitted says the detail left fileContent null because the
	// text is larger than the daemon's max_inline_content; FileContentSize
	// is then its size in bytes (fetch it from /preview or /download).
	FileContentOmitted bool  `json:"fileContentOmitted,omitempty"`
	FileContentSize    int64 `json:"fileContentSize,omitempty"`
}

// Report kinds (Report.Kind).
const (
	KindFile = "file"
	KindSite = "site"
)

// IsSite tells whether r is a site report.
func (r *Report) IsSite() bool { return r.Kind == KindSite }

// Ping is the health check body.
type Ping struct {
	Version   string    `json:"version"`
	Timestamp time.Time `json:"timestamp"`
}

// ProjectCreate is the JSON body of POST /projects. CoverImage is a data URL,
// bare base64, or an http(s) URL.
type ProjectCreate struct {
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	CoverImage  *string `json:"coverImage,omitempty"`
}

// ProjectUpdate is the multipart body of PUT /projects/{id}; nil means unchanged.
type ProjectUpdate struct {
	Name        *string
	Slug        *string // not in the seed spec: a new unique slug
	Description *string
	Cover       *Upload
}

// ReportUpdate is the JSON body of PUT /reports/{id}; nil means unchanged.
// For the build metadata a pointer to "" clears the field (Name goes back
// to the one derived from the file name).
type ReportUpdate struct {
	FileName *string   `json:"fileName,omitempty"`
	FileType *FileType `json:"fileType,omitempty"`
	BuildMeta
}

// BuildMeta is the optional build metadata of an upload or update; nil
// means not given.
type BuildMeta struct {
	Name     *string `json:"name,omitempty"`
	Branch   *string `json:"branch,omitempty"`
	Commit   *string `json:"commit,omitempty"`
	BuildURL *string `json:"buildUrl,omitempty"`
	BuildID  *string `json:"buildId,omitempty"`
}

// ReportFilter narrows a report list; zero fields do not filter.
type ReportFilter struct {
	ProjectID *int64
	Name      string
	Branch    string
}

// Upload is a file in transit. The server reads Body once, to the end. A
// client sets Open instead (or as well) so that every retry re-reads the file
// from its start: a retried request must never send an empty body.
type Upload struct {
	FileName string
	Body     io.Reader
	Open     func() (io.ReadCloser, error)
	// ContentType of the file part; "" means that of the report type.
	ContentType string
}

// ReportUpload is the multipart body of POST /reports.
type ReportUpload struct {
	ProjectID int64
	FileType  FileType
	File      Upload
	Meta      BuildMeta
	// Entry and Root are the optional fields of a site upload (issue 16):
	// the entry page, and the folder of the upload that becomes the site
	// ("." keeps the names as sent); "" sends nothing.
	Entry, Root string
	// IdempotencyKey names the upload so that a retry after a lost
	// response publishes nothing twice (the Idempotency-Key header). The
	// client makes one per call when it is empty; watch derives a stable
	// one from the file and its content.
	IdempotencyKey string
}

// Service is the API as Go. The daemon implements it over its stores, the
// client over HTTP, so request and response types exist once.
type Service interface {
	Ping(ctx context.Context) (Ping, error)

	ListProjects(ctx context.Context) ([]Project, error)
	GetProject(ctx context.Context, id int64) (Project, error)
	CreateProject(ctx context.Context, in ProjectCreate) (Project, error)
	UpdateProject(ctx context.Context, id int64, in ProjectUpdate) (Project, error)
	DeleteProject(ctx context.Context, id int64) error
	// GetRetention is a project's stored and effective retention policy.
	GetRetention(ctx context.Context, project int64) (RetentionView, error)
	// SetRetention replaces a project's policy; nil fields inherit the
	// server default (a zero Retention removes the policy).
	SetRetention(ctx context.Context, project int64, r Retention) (RetentionView, error)

	// ListReports lists every report, or one project's when projectID is non-nil.
	ListReports(ctx context.Context, projectID *int64) ([]Report, error)
	// FindReports lists the reports that match every set field of f.
	FindReports(ctx context.Context, f ReportFilter) ([]Report, error)
	GetReport(ctx context.Context, id int64) (Report, error)
	UploadReport(ctx context.Context, in ReportUpload) (Report, error)
	UpdateReport(ctx context.Context, id int64, in ReportUpdate) (Report, error)
	DeleteReport(ctx context.Context, id int64) error
}
