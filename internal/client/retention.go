package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/reportd/reportd/internal/report"
)

// GetRetention is a project's stored and effective retention policy.
func (c *Client) GetRetention(ctx context.Context, project int64) (report.RetentionView, error) {
	var out report.RetentionView
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/projects/" + itoa(project) + "/retention", out: &out})
	return out, err
}

// SetRetention replaces a project's policy; nil fields inherit the
// server default (a zero Retention removes the policy).
func (c *Client) SetRetention(ctx context.Context, project int64, r report.Retention) (report.RetentionView, error) {
	var out report.RetentionView
	_, err := c.do(ctx, call{method: http.MethodPut, path: "/projects/" + itoa(project) + "/retention", json: r, out: &out})
	return out, err
}

// Prune applies retention now to one project (project non-nil) or all;
// override's set fields replace the stored policy's for this prune. A
// dry run only plans.
func (c *Client) Prune(ctx context.Context, project *int64, override report.Retention, dryRun bool) (report.PruneResult, error) {
	path := "/prune"
	if project != nil {
		path = "/projects/" + itoa(*project) + "/prune"
	}
	q := url.Values{"dryRun": {"false"}}
	if dryRun {
		q.Set("dryRun", "true")
	}
	cl := call{method: http.MethodPost, path: path, query: q, out: &report.PruneResult{}}
	if !override.IsZero() {
		cl.json = override
	}
	var out report.PruneResult
	cl.out = &out
	_, err := c.do(ctx, cl)
	return out, err
}
