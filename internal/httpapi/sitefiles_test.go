package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// fileList mirrors GET /api/reports/{id}/files.
type fileList struct {
	ReportID   int64  `json:"reportId"`
	Kind       string `json:"kind"`
	Entry      string `json:"entry"`
	Count      int    `json:"count"`
	TotalBytes int64  `json:"totalBytes"`
	Files      []struct {
		Path        string `json:"path"`
		Size        int64  `json:"size"`
		ContentType string `json:"contentType"`
		SHA256      string `json:"sha256"`
		URL         string `json:"url"`
	} `json:"files"`
}

func listFiles(t *testing.T, e *apitest.Env, id int64) fileList {
	t.Helper()
	r := e.Get(fmt.Sprintf("/api/reports/%d/files", id))
	if r.StatusCode != 200 {
		t.Fatalf("files of %d: %d %s", id, r.StatusCode, r.Body)
	}
	var l fileList
	r.JSON(t, &l)
	return l
}

// TestReportFiles: a site lists its manifest (sorted paths, sizes, types,
// hashes, totals equal to the report's files and bytes) with each file's
// content URL; a single html report its one file, its url the siteUrl; a
// pdf its one file without a url; an unknown report is NotFound.
func TestReportFiles(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("web")
	es := append(slices.Clone(htmlcov), entry{"htmlcov/pkg/deep/other_py.html", "<p>other</p>"})
	rep := mustSite(t, uploadSite(t, e, p.ID, apitest.Part{Name: "file", FileName: "htmlcov.zip", Data: zipOf(t, es...)}))
	l := listFiles(t, e, rep.ID)
	if l.ReportID != rep.ID || l.Kind != "site" || l.Entry != "index.html" || l.Count != len(es) || l.Count != rep.Files || l.TotalBytes != rep.Bytes {
		t.Fatalf("site list head: %+v, report %+v", l, rep)
	}
	wantFiles := want(es, "htmlcov/")
	var paths []string
	for _, f := range l.Files {
		paths = append(paths, f.Path)
		sum := sha256.Sum256([]byte(wantFiles[f.Path]))
		if f.Size != int64(len(wantFiles[f.Path])) || f.SHA256 != hex.EncodeToString(sum[:]) || f.URL != contentURL(rep.ID, f.Path) {
			t.Errorf("file %+v", f)
		}
	}
	if !slices.IsSorted(paths) || len(paths) != len(wantFiles) {
		t.Errorf("paths %v", paths)
	}
	ct := map[string]string{}
	for _, f := range l.Files {
		ct[f.Path] = f.ContentType
	}
	if !strings.HasPrefix(ct["style.css"], "text/css") || !strings.HasPrefix(ct["pkg/deep/other_py.html"], "text/html") {
		t.Errorf("content types %v", ct)
	}

	page := e.MustUpload(p.ID, "page.html", report.HTML, []byte("<p>one</p>"))
	one := listFiles(t, e, page.ID)
	var got report.Report
	e.Get(fmt.Sprintf("/api/reports/%d", page.ID)).JSON(t, &got)
	if one.Kind != "file" || one.Count != 1 || one.Entry != "page.html" || one.Files[0].Path != "page.html" || one.Files[0].URL != got.SiteURL || got.SiteURL == "" {
		t.Errorf("single html: %+v (siteUrl %q)", one, got.SiteURL)
	}

	pdf := e.MustUpload(p.ID, "paper.pdf", report.PDF, apitest.MinimalPDF())
	pl := listFiles(t, e, pdf.ID)
	if pl.Kind != "file" || pl.Count != 1 || pl.Files[0].Path != "paper.pdf" || pl.Files[0].URL != "" || pl.Files[0].ContentType != "application/pdf" || pl.TotalBytes != int64(len(apitest.MinimalPDF())) {
		t.Errorf("pdf: %+v", pl)
	}

	r := e.Get("/api/reports/9999/files")
	var eb httpapi.ErrorBody
	r.JSON(t, &eb)
	if eb.Type != string(report.NotFound) {
		t.Errorf("unknown report: %d %s", r.StatusCode, r.Body)
	}
}

// TestLatestSite: /p/{project}/latest[/{name}]/site sends the client to
// the newest report's siteUrl; a newest report that is not html, or a
// daemon without a content origin, is NotFound with the reason.
func TestLatestSite(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("web")
	old := mustSite(t, uploadSite(t, e, p.ID, apitest.Part{Name: "name", Data: []byte("coverage")},
		apitest.Part{Name: "file", FileName: "htmlcov.zip", Data: zipOf(t, htmlcov...)}))
	site := mustSite(t, uploadSite(t, e, p.ID, apitest.Part{Name: "name", Data: []byte("coverage")},
		apitest.Part{Name: "file", FileName: "htmlcov.zip", Data: zipOf(t, htmlcov...)}))
	for _, path := range []string{fmt.Sprintf("/p/%d/latest/site", p.ID), fmt.Sprintf("/p/%d/latest/coverage/site", p.ID), "/p/web/latest/site?name=coverage"} {
		res := getNoFollow(t, e, path)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != site.SiteURL || res.Header.Get("X-Report-Id") != fmt.Sprint(site.ID) {
			t.Errorf("%s: %d → %q (report %s), want %q", path, res.StatusCode, res.Header.Get("Location"), res.Header.Get("X-Report-Id"), site.SiteURL)
		}
	}
	if site.SiteURL != contentURL(site.ID, "index.html") || old.ID >= site.ID {
		t.Fatalf("siteUrl %q", site.SiteURL)
	}

	page := e.MustUpload(p.ID, "page.html", report.HTML, []byte("<p>one</p>"))
	if res := getNoFollow(t, e, fmt.Sprintf("/p/%d/latest/page/site", p.ID)); res.Header.Get("Location") != contentURL(page.ID, "page.html") {
		t.Errorf("single html: %d %q", res.StatusCode, res.Header.Get("Location"))
	}

	e.MustUpload(p.ID, "paper.pdf", report.PDF, apitest.MinimalPDF())
	r := e.Get(fmt.Sprintf("/p/%d/latest/site", p.ID))
	var eb httpapi.ErrorBody
	r.JSON(t, &eb)
	if eb.Type != string(report.NotFound) || !strings.Contains(eb.Error, "is a pdf file") {
		t.Errorf("newest is a pdf: %s", r.Body)
	}

	bare := apitest.Start(t, apitest.Options{HTTP: func(c *httpapi.Config) { c.ContentURL = nil }})
	bp := bare.CreateProject("web")
	mustSite(t, uploadSite(t, bare, bp.ID, apitest.Part{Name: "file", FileName: "htmlcov.zip", Data: zipOf(t, htmlcov...)}))
	r = bare.Get(fmt.Sprintf("/p/%d/latest/site", bp.ID))
	eb = httpapi.ErrorBody{}
	r.JSON(t, &eb)
	if eb.Type != string(report.NotFound) || !strings.Contains(eb.Error, "no content origin") {
		t.Errorf("without a content origin: %s", r.Body)
	}
}

// TestSingleHTMLOddNameOpensWhereServed: a single html report whose file
// name is no valid site name ("C:page.html" has a drive letter, which an
// upload's fileName may have) is served on the content origin as
// index.html (service.SiteManifest), and its siteUrl, its listed file
// and the latest/site redirect name that same file, not the original
// name the content origin has no file for.
func TestSingleHTMLOddNameOpensWhereServed(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("web")
	for _, c := range []struct{ name, served string }{
		{"C:page.html", "index.html"},
		{"page.html", "page.html"},
	} {
		rep := e.MustUpload(p.ID, c.name, report.HTML, []byte("<p>one</p>"))
		var got report.Report
		e.Get(fmt.Sprintf("/api/reports/%d", rep.ID)).JSON(t, &got)
		l := listFiles(t, e, rep.ID)
		if got.FileName != c.name || l.Entry != c.served || len(l.Files) != 1 || l.Files[0].Path != c.served {
			t.Errorf("%s: fileName %q, listed %+v, want the one file %q", c.name, got.FileName, l, c.served)
		}
		if want := contentURL(rep.ID, c.served); got.SiteURL != want || rep.SiteURL != want || l.Files[0].URL != want {
			t.Errorf("%s: siteUrl %q (upload reply %q), file url %q, want %q", c.name, got.SiteURL, rep.SiteURL, l.Files[0].URL, want)
		}
		r := getNoFollow(t, e, fmt.Sprintf("/p/%d/latest/site", p.ID))
		if r.StatusCode != http.StatusFound || r.Header.Get("Location") != contentURL(rep.ID, c.served) {
			t.Errorf("%s: latest/site %d → %q", c.name, r.StatusCode, r.Header.Get("Location"))
		}
	}
}
