package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/reportd/reportd/internal/report"
)

func (c *Client) ListReports(ctx context.Context, projectID *int64) ([]report.Report, error) {
	var q url.Values
	if projectID != nil {
		q = url.Values{"projectId": {itoa(*projectID)}}
	}
	out := []report.Report{}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/reports", query: q, out: &out})
	if out == nil {
		out = []report.Report{}
	}
	return out, err
}

func (c *Client) GetReport(ctx context.Context, id int64) (report.Report, error) {
	var out report.Report
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/reports/" + itoa(id), out: &out})
	return out, err
}

// UploadReport streams the file as multipart; every retry re-opens it.
func (c *Client) UploadReport(ctx context.Context, in report.ReportUpload) (report.Report, error) {
	parts := []part{
		{name: "projectId", value: itoa(in.ProjectID)},
		{name: "fileType", value: string(in.FileType)},
		{name: "file", up: &in.File, ctype: in.FileType.ContentType()},
	}
	var out report.Report
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/reports", body: multipartBody(parts), out: &out, retryPost: true})
	return out, err
}

func (c *Client) UpdateReport(ctx context.Context, id int64, in report.ReportUpdate) (report.Report, error) {
	var out report.Report
	_, err := c.do(ctx, call{method: http.MethodPut, path: "/reports/" + itoa(id), json: in, out: &out})
	return out, err
}

func (c *Client) DeleteReport(ctx context.Context, id int64) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: "/reports/" + itoa(id)})
	return err
}
