package httpapi_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// contractHistoryChart: GET /api/projects/{id}/history?format=svg draws the
// history contractHistory made (two builds of "hist" on main) as an SVG
// with one link per build; bad format or chartId values are
// ValidationErrors in the documented body.
func contractHistoryChart(t *testing.T, e *apiEnv, project int64) {
	t.Helper()
	p := strconv.FormatInt(project, 10)
	r := e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history?name=hist&branch=main&format=svg&chartId=c-1"})
	wantStatus(t, r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
		t.Fatalf("chart Content-Type %q", ct)
	}
	var links []string
	dec := xml.NewDecoder(bytes.NewReader(r.body))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not XML: %v\n%s", err, r.body)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "a" {
			for _, a := range se.Attr {
				if a.Name.Local == "href" {
					links = append(links, a.Value)
				}
			}
		}
	}
	pts := decode[[]report.HistoryPoint](t, e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history?name=hist&branch=main"}))
	if len(links) != len(pts) || len(pts) == 0 || links[len(links)-1] != "#/reports/"+strconv.FormatInt(pts[len(pts)-1].ReportID, 10) {
		t.Fatalf("chart links %v for history %+v", links, pts)
	}
	if !bytes.Contains(r.body, []byte(`id="c-1-title"`)) {
		t.Fatalf("chartId not used:\n%s", r.body)
	}
	r = e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history?name=nothing&format=svg"})
	if wantStatus(t, r, 200); !bytes.Contains(r.body, []byte("No reports yet")) {
		t.Fatalf("chart of nothing: %s", r.body)
	}
	for _, q := range []string{"?name=hist&format=png", "?name=hist&format=svg&chartId=1x", "?format=svg"} {
		r := e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history" + q, raw: true})
		if wantStatus(t, r, 500); decode[httpapi.ErrorBody](t, r).Type != string(report.Validation) {
			t.Fatalf("history%s: %s", q, r)
		}
	}
}
