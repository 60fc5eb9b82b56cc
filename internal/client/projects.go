package client

import (
	"context"
	"net/http"

	"github.com/reportd/reportd/internal/report"
)

// Ping calls the health check.
func (c *Client) Ping(ctx context.Context) (report.Ping, error) {
	var out report.Ping
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/reports/ping", out: &out})
	return out, err
}

func (c *Client) ListProjects(ctx context.Context) ([]report.Project, error) {
	out := []report.Project{}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/projects", out: &out})
	if out == nil { // a server answering null still means "none"
		out = []report.Project{}
	}
	return out, err
}

func (c *Client) GetProject(ctx context.Context, id int64) (report.Project, error) {
	var out report.Project
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/projects/" + itoa(id), out: &out})
	return out, err
}

// CreateProject posts JSON; a cover goes in coverImage as a data URL, bare
// base64 or an http(s) URL (DESIGN.md).
func (c *Client) CreateProject(ctx context.Context, in report.ProjectCreate) (report.Project, error) {
	var out report.Project
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/projects", json: in, out: &out})
	return out, err
}

// UpdateProject sends the multipart PUT; only the set fields become parts.
func (c *Client) UpdateProject(ctx context.Context, id int64, in report.ProjectUpdate) (report.Project, error) {
	var parts []part
	if in.Name != nil {
		parts = append(parts, part{name: "name", value: *in.Name})
	}
	if in.Slug != nil {
		parts = append(parts, part{name: "slug", value: *in.Slug})
	}
	if in.Description != nil {
		parts = append(parts, part{name: "description", value: *in.Description})
	}
	if in.Cover != nil {
		parts = append(parts, part{name: "coverImage", up: in.Cover, ctype: imageType(in.Cover.FileName)})
	}
	var out report.Project
	_, err := c.do(ctx, call{method: http.MethodPut, path: "/projects/" + itoa(id), body: multipartBody(parts), out: &out})
	return out, err
}

func (c *Client) DeleteProject(ctx context.Context, id int64) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: "/projects/" + itoa(id)})
	return err
}
