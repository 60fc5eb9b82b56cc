package report

import (
	"context"
	"io"
	"time"
)

// Project is the API's project object. Description and CoverImage are null
// when unset, never missing (DESIGN.md).
type Project struct {
	ID              int64     `json:"id"`
	Name            string    `json:"name"`
	Description     *string   `json:"description"`
	CreatedAt       LocalTime `json:"createdAt"`
	CoverImage      *string   `json:"coverImage"`
	ReportCount     int64     `json:"reportCount"`
	TodayNewReports int64     `json:"todayNewReports"`
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
	// FileContentOmitted says the detail left fileContent null because the
	// text is larger than the daemon's max_inline_content; FileContentSize
	// is then its size in bytes (fetch it from /preview or /download).
	FileContentOmitted bool  `json:"fileContentOmitted,omitempty"`
	FileContentSize    int64 `json:"fileContentSize,omitempty"`
}

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
	Description *string
	Cover       *Upload
}

// ReportUpdate is the JSON body of PUT /reports/{id}; nil means unchanged.
type ReportUpdate struct {
	FileName *string   `json:"fileName,omitempty"`
	FileType *FileType `json:"fileType,omitempty"`
}

// Upload is a file in transit. The server reads Body once, to the end. A
// client sets Open instead (or as well) so that every retry re-reads the file
// from its start: a retried request must never send an empty body.
type Upload struct {
	FileName string
	Body     io.Reader
	Open     func() (io.ReadCloser, error)
}

// ReportUpload is the multipart body of POST /reports.
type ReportUpload struct {
	ProjectID int64
	FileType  FileType
	File      Upload
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

	// ListReports lists every report, or one project's when projectID is non-nil.
	ListReports(ctx context.Context, projectID *int64) ([]Report, error)
	GetReport(ctx context.Context, id int64) (Report, error)
	UploadReport(ctx context.Context, in ReportUpload) (Report, error)
	UpdateReport(ctx context.Context, id int64, in ReportUpdate) (Report, error)
	DeleteReport(ctx context.Context, id int64) error
}
