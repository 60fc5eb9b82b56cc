package client_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

func ptr[T any](v T) *T { return &v }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestAgainstRealStack runs every method of the client against the real
// API stack (bbolt, file store, service, HTTP handler) on loopback.
func TestAgainstRealStack(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	c, err := client.New(client.Options{Server: env.URL, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	if p, err := c.Ping(ctx); err != nil || p.Version == "" || p.Timestamp.IsZero() {
		t.Fatalf("ping: %+v %v", p, err)
	}
	if ps, err := c.ListProjects(ctx); err != nil || ps == nil || len(ps) != 0 {
		t.Fatalf("empty list: %#v %v", ps, err)
	}

	cover := "data:image/png;base64," + b64(apitest.PNG())
	p, err := c.CreateProject(ctx, report.ProjectCreate{Name: "alpha", Description: ptr("d"), CoverImage: &cover})
	if err != nil || p.ID == 0 || p.Name != "alpha" || p.CoverImage == nil {
		t.Fatalf("create: %+v %v", p, err)
	}
	p, err = c.UpdateProject(ctx, p.ID, report.ProjectUpdate{
		Name: ptr("alpha2"),
		Cover: &report.Upload{FileName: "c.png", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(apitest.PNG())), nil
		}},
	})
	if err != nil || p.Name != "alpha2" || *p.Description != "d" {
		t.Fatalf("update: %+v %v", p, err)
	}
	if got, err := c.GetProject(ctx, p.ID); err != nil || got.Name != "alpha2" {
		t.Fatalf("get: %+v %v", got, err)
	}

	md := []byte("# Résumé\n")
	r, err := c.UploadReport(ctx, report.ReportUpload{ProjectID: p.ID, FileType: report.MD, File: report.Upload{
		FileName: "dir/résumé.md",
		Open:     func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(md)), nil },
	}})
	if err != nil || r.FileName != "résumé.md" || r.FileType != report.MD {
		t.Fatalf("upload: %+v %v", r, err)
	}
	if got, err := c.GetReport(ctx, r.ID); err != nil || got.FileContent == nil || *got.FileContent != string(md) {
		t.Fatalf("get report: %+v %v", got, err)
	}
	if rs, err := c.ListReports(ctx, &p.ID); err != nil || len(rs) != 1 || rs[0].FileContent != nil {
		t.Fatalf("list reports: %+v %v", rs, err)
	}
	if rs, err := c.ListReports(ctx, ptr(int64(9999))); err != nil || rs == nil || len(rs) != 0 {
		t.Fatalf("list other project: %#v %v", rs, err)
	}

	s, err := c.Download(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(s)
	s.Close()
	if s.FileName != "résumé.md" || !bytes.Equal(body, md) {
		t.Fatalf("download: name %q body %q", s.FileName, body)
	}
	s, err = c.Preview(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(s)
	s.Close()
	if !bytes.Equal(body, md) || s.ContentType != "text/markdown; charset=utf-8" {
		t.Fatalf("preview: %q %q", body, s.ContentType)
	}

	r, err = c.UpdateReport(ctx, r.ID, report.ReportUpdate{FileName: ptr("cv.md")})
	if err != nil || r.FileName != "cv.md" {
		t.Fatalf("update report: %+v %v", r, err)
	}
	_, err = c.UpdateReport(ctx, r.ID, report.ReportUpdate{FileType: ptr(report.PDF)})
	if !report.IsKind(err, report.Validation) {
		t.Fatalf("type mismatch should be a ValidationError: %v", err)
	}

	if err := c.DeleteReport(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetReport(ctx, r.ID); !report.IsKind(err, report.NotFound) {
		t.Fatalf("deleted report: %v", err)
	}
	if _, err := c.Download(ctx, r.ID); !report.IsKind(err, report.NotFound) {
		t.Fatalf("download deleted: %v", err)
	}
	if err := c.DeleteProject(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	var re *report.Error
	if err := c.DeleteProject(ctx, p.ID); !errors.As(err, &re) || re.Kind != report.NotFound || re.Message == "" {
		t.Fatalf("delete twice: %#v", err)
	}
}

// TestRetentionSameThroughClientAndService: the retention methods of
// report.Service answer the same through the client over HTTP as from the
// daemon's service in process, whichever of them wrote the policy, and
// both say NotFound for a project that does not exist.
func TestRetentionSameThroughClientAndService(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	c, err := client.New(client.Options{Server: env.URL, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	impls := []struct {
		name string
		svc  report.Service
	}{{"client", c}, {"service", env.Svc}}
	p, err := c.CreateProject(ctx, report.ProjectCreate{Name: "retained"})
	if err != nil {
		t.Fatal(err)
	}
	for i, writer := range impls {
		want := report.Retention{KeepLast: ptr(3 + i), MaxAgeDays: ptr(30), KeepNewestPerBranch: ptr(i == 0)}
		set, err := writer.svc.SetRetention(ctx, p.ID, want)
		if err != nil || *set.KeepLast != 3+i || set.Effective.KeepLast != 3+i || set.Effective.KeepNewestPerBranch != (i == 0) {
			t.Fatalf("SetRetention through the %s: %+v %v", writer.name, set, err)
		}
		for _, reader := range impls {
			got, err := reader.svc.GetRetention(ctx, p.ID)
			if err != nil || !reflect.DeepEqual(got, set) {
				t.Errorf("written through the %s, read through the %s: %+v %v, want %+v", writer.name, reader.name, got, err, set)
			}
		}
	}
	for _, im := range impls {
		if _, err := im.svc.GetRetention(ctx, p.ID+1000); !report.IsKind(err, report.NotFound) {
			t.Errorf("%s: GetRetention of a missing project: %v, want NotFoundError", im.name, err)
		}
		if _, err := im.svc.SetRetention(ctx, p.ID+1000, report.Retention{KeepLast: ptr(1)}); !report.IsKind(err, report.NotFound) {
			t.Errorf("%s: SetRetention of a missing project: %v, want NotFoundError", im.name, err)
		}
	}
}
