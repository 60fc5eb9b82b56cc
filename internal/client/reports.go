package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// FindReports lists the reports matching f (GET /api/reports?projectId=&name=&branch=).
func (c *Client) FindReports(ctx context.Context, f report.ReportFilter) ([]report.Report, error) {
	q := url.Values{}
	if f.ProjectID != nil {
		q.Set("projectId", itoa(*f.ProjectID))
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.Branch != "" {
		q.Set("branch", f.Branch)
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
	}
	// The build metadata goes before the file, only the fields given, so
	// a seed daemon sees the seed's three parts when there are none.
	for _, m := range []struct {
		name string
		v    *string
	}{{"name", in.Meta.Name}, {"branch", in.Meta.Branch}, {"commit", in.Meta.Commit}, {"buildUrl", in.Meta.BuildURL}, {"buildId", in.Meta.BuildID}} {
		if m.v != nil && *m.v != "" {
			parts = append(parts, part{name: m.name, value: *m.v})
		}
	}
	for _, f := range []struct{ name, v string }{{"entry", in.Entry}, {"root", in.Root}} {
		if f.v != "" {
			parts = append(parts, part{name: f.name, value: f.v})
		}
	}
	ctype := in.File.ContentType
	if ctype == "" {
		ctype = in.FileType.ContentType()
	}
	parts = append(parts, part{name: "file", up: &in.File, ctype: ctype})
	key := in.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey() // one per file per run, the same on every retry
	}
	var out report.Report
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/reports", body: multipartBody(parts), out: &out, retryPost: true, idemKey: key})
	return out, err
}

// newIdempotencyKey is a random Idempotency-Key: "reportctl-" and 32 hex digits.
func newIdempotencyKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "reportctl-" + hex.EncodeToString(b)
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
