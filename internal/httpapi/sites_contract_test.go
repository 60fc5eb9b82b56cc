package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// newSitesAPIEnv is newAPIEnv with a content origin (httpapi.Config.ContentURL).
func newSitesAPIEnv(t *testing.T) *apiEnv {
	return newAPIEnv(t, envOpts{mode: httpapi.StatusSpec, contentURL: contentURL})
}

// TestContractSites: every answer about a site report, validated against
// openapi.json: the upload (archive and parts), list, detail, update,
// preview and stable-link redirects, the zip download, a refused archive
// and the delete; single-file html reports carry siteUrl too.
func TestContractSites(t *testing.T) {
	e := newSitesAPIEnv(t)
	p := decode[report.Project](t, e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "sites"})))
	pid := fmt.Sprint(p.ID)
	r := e.do(multipartCall("POST", "/api/reports", field("projectId", pid), field("fileType", "html"),
		field("entry", "mod_py.html"), file("file", "htmlcov.zip", zipOf(t, htmlcov...))))
	wantStatus(t, r, http.StatusCreated)
	site := decode[report.Report](t, r)
	if site.Kind != report.KindSite || site.Entry != "mod_py.html" || site.SiteURL != contentURL(site.ID, "mod_py.html") {
		t.Fatalf("site: %s", r)
	}
	var parts []formPart
	for _, f := range htmlcov {
		parts = append(parts, file("file", f.name, []byte(f.data)))
	}
	call := multipartCall("POST", "/api/reports", append([]formPart{field("projectId", pid), field("fileType", "html"), field("root", "htmlcov")}, parts...)...)
	call.raw = true // the document has one file part; its response is still validated
	r = e.do(call)
	wantStatus(t, r, http.StatusCreated)
	fromParts := decode[report.Report](t, r)
	r = e.do(multipartCall("POST", "/api/reports", field("projectId", pid), field("fileType", "html"), file("file", "one.html", []byte("<p>one</p>"))))
	single := decode[report.Report](t, r)
	if single.Kind != report.KindFile || single.SiteURL != contentURL(single.ID, "one.html") {
		t.Fatalf("single: %s", r)
	}
	list := decode[[]report.Report](t, e.do(apiCall{method: "GET", path: "/api/reports?projectId=" + pid}))
	if len(list) != 3 || list[1].Kind != report.KindSite || list[1].Files != len(htmlcov) {
		t.Fatalf("list: %+v", list)
	}
	id := fmt.Sprint(site.ID)
	d := decode[report.Report](t, e.do(apiCall{method: "GET", path: "/api/reports/" + id}))
	if d.FileContent != nil || d.FileContentOmitted || d.Bytes == 0 {
		t.Fatalf("detail: %+v", d)
	}
	if r := e.do(apiCall{method: "GET", path: "/api/reports/" + id + "/preview"}); r.status != http.StatusFound || r.header.Get("Location") != site.SiteURL {
		t.Fatalf("preview: %s %v", r, r.header)
	}
	// The newest report named htmlcov is the one from parts.
	if r := e.do(apiCall{method: "GET", path: "/p/" + pid + "/latest/htmlcov/site"}); r.status != http.StatusFound || r.header.Get("Location") != fromParts.SiteURL {
		t.Fatalf("latest site: %s %v", r, r.header)
	}
	dl := e.do(apiCall{method: "GET", path: "/api/reports/" + id + "/download"})
	if dl.status != 200 || dl.header.Get("Content-Type") != "application/zip" || !strings.Contains(dl.header.Get("Content-Disposition"), `filename="htmlcov.zip"`) {
		t.Fatalf("download: %s %v", dl, dl.header)
	}
	put := jsonCall("PUT", "/api/reports/"+id, map[string]any{"fileName": "cov.zip", "commit": "abc"})
	put.raw = true // the document's name pattern is for single files; the response is validated
	u := e.do(put)
	if got := decode[report.Report](t, u); got.FileName != "cov.zip" || got.Kind != report.KindSite {
		t.Fatalf("update: %s", u)
	}
	r = e.do(jsonCall("PUT", "/api/reports/"+id, map[string]any{"fileType": "pdf"}))
	wantStatus(t, r, 500)
	r = e.do(multipartCall("POST", "/api/reports", field("projectId", pid), field("fileType", "html"),
		file("file", "evil.zip", zipOf(t, entry{"index.html", "<p>"}, entry{"../evil", "x"}))))
	if wantStatus(t, r, 500); !strings.Contains(string(r.body), "ValidationError") {
		t.Fatalf("hostile: %s", r)
	}
	wantStatus(t, e.do(apiCall{method: "DELETE", path: "/api/reports/" + id}), http.StatusNoContent)
}
