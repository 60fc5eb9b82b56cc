package httpapi_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// entry is one archive entry of a test site.
type entry struct {
	name string
	data string
}

func zipOf(t testing.TB, es ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range es {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tarOf(t testing.TB, es ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, e.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// htmlcov is a small coverage.py-like site below one top folder.
var htmlcov = []entry{
	{"htmlcov/index.html", "<html><body><a href='mod_py.html'>mod</a></body></html>"},
	{"htmlcov/mod_py.html", "<html><body>mod</body></html>"},
	{"htmlcov/style.css", "body{color:red}"},
	{"htmlcov/coverage_html.js", "console.log(1)"},
	{"htmlcov/status.json", `{"files":{}}`},
}

// contentURL is the test's content origin hook.
func contentURL(id int64, file string) string {
	return fmt.Sprintf("http://%d.content.test/%s", id, file)
}

func startSites(t *testing.T, o apitest.Options) *apitest.Env {
	t.Helper()
	http0 := o.HTTP
	o.HTTP = func(c *httpapi.Config) {
		c.ContentURL = contentURL
		if http0 != nil {
			http0(c)
		}
	}
	return apitest.Start(t, o)
}

func uploadSite(t *testing.T, e *apitest.Env, project int64, parts ...apitest.Part) *apitest.Response {
	t.Helper()
	all := append([]apitest.Part{{Name: "projectId", Data: []byte(fmt.Sprint(project))}, {Name: "fileType", Data: []byte("html")}}, parts...)
	body, ct := apitest.Multipart(all...)
	return e.Do("POST", "/api/reports", body, ct)
}

func mustSite(t *testing.T, r *apitest.Response) report.Report {
	t.Helper()
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	var rep report.Report
	r.JSON(t, &rep)
	if rep.Kind != report.KindSite || rep.FileType != report.HTML {
		t.Fatalf("not a site: %s", r.Body)
	}
	return rep
}

// siteFiles reads every file of report id through the service the content
// origin uses.
func siteFiles(t *testing.T, e *apitest.Env, id int64) (site.Manifest, map[string]string) {
	t.Helper()
	m, err := e.Svc.SiteManifest(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range m.Files {
		o, err := e.Svc.OpenSiteFile(t.Context(), id, f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(o)
		o.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Path] = string(b)
	}
	return m, out
}

func want(es []entry, strip string) map[string]string {
	m := map[string]string{}
	for _, e := range es {
		m[strings.TrimPrefix(e.name, strip)] = e.data
	}
	return m
}

func sameFiles(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("files %v, want %v", keys(got), keys(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("file %q: %q, want %q", k, got[k], v)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// getNoFollow sends a GET without following redirects.
func getNoFollow(t *testing.T, e *apitest.Env, path string) *http.Response {
	t.Helper()
	resp, err := noRedirects.Get(e.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestSiteUploadRoundTrip: a zip, a tar.gz, a tar and several file parts
// each become one site report whose files read back as uploaded, the one
// top folder stripped, the entry found, every seed field as before.
func TestSiteUploadRoundTrip(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("sites")
	cases := []struct {
		name  string
		parts []apitest.Part
	}{
		{"zip", []apitest.Part{{Name: "file", FileName: "htmlcov.zip", Data: zipOf(t, htmlcov...)}}},
		{"tar.gz", []apitest.Part{{Name: "file", FileName: "htmlcov.tar.gz", Data: gz(t, tarOf(t, htmlcov...))}}},
		{"tgz named .bin", []apitest.Part{{Name: "file", FileName: "upload.bin", Data: gz(t, tarOf(t, htmlcov...))}}},
		{"tar", []apitest.Part{{Name: "file", FileName: "htmlcov.tar", Data: tarOf(t, htmlcov...)}}},
	}
	var multi []apitest.Part
	for _, f := range htmlcov {
		multi = append(multi, apitest.Part{Name: "file", FileName: f.name, Data: []byte(f.data)})
	}
	cases = append(cases, struct {
		name  string
		parts []apitest.Part
	}{"parts", multi})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := mustSite(t, uploadSite(t, e, p.ID, c.parts...))
			if rep.Entry != "index.html" || rep.Files != len(htmlcov) || rep.FilePath != fmt.Sprintf("/uploads/sites/%d/index.html", rep.ID) {
				t.Fatalf("site fields: %+v", rep)
			}
			var total int64
			for _, f := range htmlcov {
				total += int64(len(f.data))
			}
			if rep.Bytes != total || rep.FileContent != nil {
				t.Fatalf("bytes %d, want %d; fileContent %v", rep.Bytes, total, rep.FileContent)
			}
			if rep.SiteURL != contentURL(rep.ID, "index.html") {
				t.Fatalf("siteUrl %q", rep.SiteURL)
			}
			m, got := siteFiles(t, e, rep.ID)
			sameFiles(t, got, want(htmlcov, "htmlcov/"))
			if m.Entry != "index.html" {
				t.Fatalf("manifest entry %q", m.Entry)
			}
			if c.name == "parts" && rep.FileName != "htmlcov" {
				t.Fatalf("parts: fileName %q, want the shared folder", rep.FileName)
			}
			// The detail and the list carry the same site fields.
			var d report.Report
			r := e.Get(fmt.Sprintf("/api/reports/%d", rep.ID))
			r.JSON(t, &d)
			if r.StatusCode != 200 || d.Kind != report.KindSite || d.FileContent != nil || d.FileContentOmitted || d.Entry != "index.html" || d.SiteURL != rep.SiteURL {
				t.Fatalf("detail: %d %s", r.StatusCode, r.Body)
			}
			// Preview and the filePath redirect to the content origin.
			for path, file := range map[string]string{
				fmt.Sprintf("/api/reports/%d/preview", rep.ID): "index.html",
				rep.FilePath: "index.html",
				fmt.Sprintf("/uploads/sites/%d/style.css", rep.ID): "style.css",
			} {
				resp := getNoFollow(t, e, path)
				if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != contentURL(rep.ID, file) {
					t.Fatalf("%s: %d %q", path, resp.StatusCode, resp.Header.Get("Location"))
				}
			}
			// The download is a zip of the site, the same bytes each time.
			dl := e.Get(fmt.Sprintf("/api/reports/%d/download", rep.ID))
			if dl.StatusCode != 200 || dl.Header.Get("Content-Type") != "application/zip" ||
				!strings.Contains(dl.Header.Get("Content-Disposition"), ".zip") {
				t.Fatalf("download: %d %v", dl.StatusCode, dl.Header)
			}
			zr, err := zip.NewReader(bytes.NewReader(dl.Body), int64(len(dl.Body)))
			if err != nil {
				t.Fatal(err)
			}
			inZip := map[string]string{}
			var order []string
			for _, f := range zr.File {
				rc, _ := f.Open()
				b, _ := io.ReadAll(rc)
				rc.Close()
				inZip[f.Name] = string(b)
				order = append(order, f.Name)
			}
			sameFiles(t, inZip, want(htmlcov, "htmlcov/"))
			if !sort.StringsAreSorted(order) {
				t.Fatalf("zip order %v", order)
			}
			if again := e.Get(fmt.Sprintf("/api/reports/%d/download", rep.ID)); !bytes.Equal(again.Body, dl.Body) {
				t.Fatal("two downloads of one site differ")
			}
			// A client holding the zip's tag, in a list or weak, gets a 304.
			req, err := http.NewRequest("GET", e.URL+fmt.Sprintf("/api/reports/%d/download", rep.ID), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("If-None-Match", `"other", W/`+dl.Header.Get("ETag"))
			nm, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			nm.Body.Close()
			if nm.StatusCode != http.StatusNotModified {
				t.Fatalf("If-None-Match with the zip's ETag in a list: %d", nm.StatusCode)
			}
		})
	}
	// The stable link of the newest report opens it on the content origin.
	if resp := getNoFollow(t, e, fmt.Sprintf("/p/%d/latest/site", p.ID)); resp.StatusCode != http.StatusFound ||
		resp.Header.Get("Location") != contentURL(int64(len(cases)), "index.html") {
		t.Fatalf("latest/site: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Every report of the list has a kind; sites theirs.
	var list []report.Report
	e.Get(fmt.Sprintf("/api/reports?projectId=%d", p.ID)).JSON(t, &list)
	if len(list) != len(cases) {
		t.Fatalf("list: %d reports", len(list))
	}
	for _, r := range list {
		if r.Kind != report.KindSite || r.Files != len(htmlcov) {
			t.Fatalf("list item %+v", r)
		}
	}
}
