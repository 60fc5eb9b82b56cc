package httpapi_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
)

// An id is parsed by one rule wherever it comes from: "+1" was refused in
// the path but accepted as ?projectId= and as a multipart field.
func TestOneIDRule(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	if p.ID != 1 {
		t.Fatalf("first project has id %d", p.ID)
	}
	for _, raw := range []string{"+1", " 1", "1.0", "0x1", "-1", "0"} {
		t.Run(fmt.Sprintf("%q", raw), func(t *testing.T) {
			wantError(t, e.Get("/api/projects/"+urlEscape(raw)), report.Validation)
			wantError(t, e.Get("/api/reports?projectId="+urlEscape(raw)), report.Validation)
			body, ct := apitest.Multipart(
				apitest.Part{Name: "projectId", Data: []byte(raw)},
				apitest.Part{Name: "fileType", Data: []byte("md")},
				apitest.Part{Name: "file", FileName: "a.md", Data: []byte("# a")},
			)
			wantError(t, e.Do("POST", "/api/reports", body, ct), report.Validation)
		})
	}
	if len(e.Tree()) != 0 {
		t.Fatalf("a refused upload left files: %v", e.Tree())
	}
	e.MustUpload(1, "a.md", report.MD, []byte("# a"))
	if r := e.Get("/api/reports?projectId=1"); r.StatusCode != 200 {
		t.Fatalf("?projectId=1: %d %s", r.StatusCode, r.Body)
	}
}

func urlEscape(s string) string {
	var b bytes.Buffer
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// The upload refuses exactly the PDFs that /pdf would refuse: %%EOF must
// sit in the last sniff.TrailerWindow bytes at both.
func TestPDFTrailerWindowAgrees(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	pdf := apitest.MinimalPDF()
	near := append(append([]byte{}, pdf...), bytes.Repeat([]byte{' '}, sniff.TrailerWindow-20)...)
	rep := e.MustUpload(p.ID, "near.pdf", report.PDF, near)
	if r := e.Get(fmt.Sprintf("/api/reports/%d/pdf", rep.ID)); r.StatusCode != 200 || !bytes.Equal(r.Body, near) {
		t.Fatalf("accepted PDF not served: %d %s", r.StatusCode, r.Body)
	}
	before := e.Tree()
	far := append(append([]byte{}, pdf...), bytes.Repeat([]byte{' '}, 1500)...)
	wantError(t, e.Upload(p.ID, "far.pdf", report.PDF, far), report.Validation)
	if got := e.Tree(); len(got) != len(before) {
		t.Fatalf("refused upload left files: %v", got)
	}
}
