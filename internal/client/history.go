package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/reportd/reportd/internal/report"
)

// HistoryOptions selects a history (GET /api/projects/{id}/history).
// Project is an id or a slug; Branch nil means any branch (a pointer to
// "" means reports without one); Type "" any type; Limit 0 the server's
// default (100).
type HistoryOptions struct {
	Project string
	Name    string
	Branch  *string
	Type    string
	Limit   int
	Flaky   bool // mark flaky tests per point (?flaky=true)
}

// History is the newest reports of a name, oldest first.
func (c *Client) History(ctx context.Context, o HistoryOptions) ([]report.HistoryPoint, error) {
	q := url.Values{"name": {o.Name}}
	if o.Branch != nil {
		q.Set("branch", *o.Branch)
	}
	if o.Type != "" {
		q.Set("type", o.Type)
	}
	if o.Flaky {
		q.Set("flaky", "true")
	}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out []report.HistoryPoint
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/projects/" + url.PathEscape(o.Project) + "/history", query: q, out: &out})
	return out, err
}

// Compare compares report id with base: "" or "previous", "branch:NAME"
// or a report id (GET /api/reports/{id}/compare).
func (c *Client) Compare(ctx context.Context, id int64, base string) (report.Comparison, error) {
	var q url.Values
	if base != "" {
		q = url.Values{"base": {base}}
	}
	var out report.Comparison
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/reports/" + itoa(id) + "/compare", query: q, out: &out})
	return out, err
}
