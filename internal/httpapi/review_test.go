package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
)

// A PUT that changes only fileType keeps the bytes but changes what is
// served (the preview's Content-Type, and the PDF engine), so a client
// revalidating with the old ETag must get the new representation, not 304.
func TestReviewETagChangesWithFileType(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.md", report.MD, []byte("<p>same bytes</p>\n"))
	prev := fmt.Sprintf("/api/reports/%d/preview", rep.ID)
	old := e.Get(prev).Header.Get("ETag")
	if old == "" {
		t.Fatal("preview without ETag")
	}
	if r := e.PostJSON("PUT", fmt.Sprintf("/api/reports/%d", rep.ID), map[string]any{"fileName": "a.html", "fileType": "html"}); r.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", r.StatusCode, r.Body)
	}
	req, _ := http.NewRequest("GET", e.URL+prev, nil)
	req.Header.Set("If-None-Match", old)
	r := e.Send(req)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("If-None-Match with the pre-PUT ETag %s: status %d, want 200", old, r.StatusCode)
	}
	if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q after the retype", ct)
	}
	if now := r.Header.Get("ETag"); now == old {
		t.Errorf("ETag unchanged (%s) though the representation changed", now)
	}
	// The new tag still revalidates.
	req, _ = http.NewRequest("GET", e.URL+prev, nil)
	req.Header.Set("If-None-Match", r.Header.Get("ETag"))
	if r := e.Send(req); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: %d, want 304", r.StatusCode)
	}
}
