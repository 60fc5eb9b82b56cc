package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// TestContractPresignedDownload: with Config.PresignDownload set, the
// download of a PDF is the documented 302 (Location, Cache-Control:
// no-store, CORS) and the hook is handed the exact Content-Disposition and
// Content-Type reportd would send; an HTML report is never offered to it;
// a hook that declines leaves the download to reportd, and a hook that
// fails is the API's error. The bucket end of it runs against versitygw in
// internal/daemon (TestPresignDownloads).
func TestContractPresignedDownload(t *testing.T) {
	type call struct {
		id                       int64
		disposition, contentType string
	}
	var (
		mu      sync.Mutex
		calls   []call
		decline bool
		fail    error
	)
	e := newAPIEnv(t, envOpts{presign: func(_ context.Context, rec report.ReportRecord, disposition, contentType string) (string, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, call{rec.ID, disposition, contentType})
		if fail != nil {
			return "", false, fail
		}
		return fmt.Sprintf("https://bucket.s3.example/reports/%d.pdf?X-Amz-Signature=abc", rec.ID), !decline, nil
	}})
	r := e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "Presign"}))
	wantStatus(t, r, 201)
	pid := strconv.FormatInt(decode[report.Project](t, r).ID, 10)
	up := func(fileType, name string, data []byte) int64 {
		r := e.do(multipartCall("POST", "/api/reports", field("projectId", pid), field("fileType", fileType), file("file", name, data)))
		wantStatus(t, r, 201)
		return decode[report.Report](t, r).ID
	}
	pdfID := up("pdf", "Bericht März.pdf", samplePDF)
	htmlID := up("html", "r.html", []byte("<p>hi</p>"))

	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/download", pdfID)})
	wantStatus(t, r, http.StatusFound)
	if got, want := r.header.Get("Location"), fmt.Sprintf("https://bucket.s3.example/reports/%d.pdf?X-Amz-Signature=abc", pdfID); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("302 headers: %v", r.header)
	}
	want := call{pdfID, httpapi.ContentDisposition("attachment", "Bericht März.pdf"), "application/pdf"}
	if len(calls) != 1 || calls[0] != want {
		t.Fatalf("hook calls %+v, want [%+v]", calls, want)
	}

	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/download", htmlID)})
	wantStatus(t, r, http.StatusOK)
	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/preview", pdfID)})
	wantStatus(t, r, http.StatusOK)
	if len(calls) != 1 {
		t.Errorf("the hook was asked for html or a preview: %+v", calls)
	}

	decline = true
	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/download", pdfID)})
	wantStatus(t, r, http.StatusOK)
	if string(r.body) != string(samplePDF) || r.header.Get("Content-Disposition") != want.disposition {
		t.Errorf("declined: %q, %q", r.header.Get("Content-Disposition"), r.body)
	}

	decline, fail = false, report.Errorf(report.Storage, "bucket down")
	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/download", pdfID)})
	e.checkErrorBody(r)
	if r.status < 400 || r.header.Get("Location") != "" {
		t.Errorf("failing hook: %d, Location %q", r.status, r.header.Get("Location"))
	}
}
