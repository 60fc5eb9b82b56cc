package httpapi_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// errorText is the error body's message.
func errorText(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var body struct{ Error string }
	r.JSON(t, &body)
	return body.Error
}

func formField(name, v string) apitest.Part { return apitest.Part{Name: name, Data: []byte(v)} }

func zipPart(t *testing.T, name string, es ...entry) apitest.Part {
	return apitest.Part{Name: "file", FileName: name, Data: zipOf(t, es...)}
}

// storedObjects lists what the data directory holds below uploads/cas and
// uploads/sites, as slash paths.
func storedObjects(t *testing.T, dataDir string) (cas, manifests []string) {
	t.Helper()
	apitest.WaitJournal(t, dataDir)
	walk := func(sub string) []string {
		var out []string
		root := filepath.Join(dataDir, "uploads", sub)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				r, _ := filepath.Rel(root, p)
				out = append(out, filepath.ToSlash(r))
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	return walk("cas"), walk("sites")
}

// TestSiteEntryAndRoot: the entry page defaults to index.html, then the
// well-known names, then the only .html file, else none; one shared top
// folder is stripped unless root says otherwise; explicit entry and root
// win; a bad one is a clear error and stores nothing.
func TestSiteEntryAndRoot(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("entries")
	cases := []struct {
		name        string
		parts       []apitest.Part
		entry       string
		files       []string
		wantSiteURL string
	}{
		{"mochawesome", []apitest.Part{zipPart(t, "m.zip", entry{"mochawesome.html", "<p>"}, entry{"assets/app.js", "x"}, entry{"other.html", "<p>"})},
			"mochawesome.html", []string{"assets/app.js", "mochawesome.html", "other.html"}, "mochawesome.html"},
		{"report.html", []apitest.Part{zipPart(t, "r.zip", entry{"out/report.html", "<p>"}, entry{"out/a.html", "<p>"})},
			"report.html", []string{"a.html", "report.html"}, "report.html"},
		{"only html", []apitest.Part{zipPart(t, "o.zip", entry{"x/pages/cover.htm", "<p>"}, entry{"x/data.json", "{}"})},
			"pages/cover.htm", []string{"data.json", "pages/cover.htm"}, "pages/cover.htm"},
		{"no entry", []apitest.Part{zipPart(t, "n.zip", entry{"a.html", "<p>"}, entry{"b.html", "<p>"})},
			"", []string{"a.html", "b.html"}, ""},
		{"explicit entry and root", []apitest.Part{zipPart(t, "e.zip", entry{"build/report/index.html", "<p>"}, entry{"build/report/sub/page.html", "<p>"}),
			formField("root", "build/report"), formField("entry", "sub/page.html")},
			"sub/page.html", nil, "sub/page.html"},
		{"root dot keeps names", []apitest.Part{zipPart(t, "d.zip", entry{"htmlcov/index.html", "<p>"}, entry{"htmlcov/x.html", ""}), formField("root", ".")},
			"", []string{"htmlcov/index.html", "htmlcov/x.html"}, ""},
		{"root dot with entry", []apitest.Part{zipPart(t, "d.zip", entry{"htmlcov/index.html", "<p>"}, entry{"htmlcov/x.css", ""}), formField("root", "."), formField("entry", "htmlcov/index.html")},
			"htmlcov/index.html", []string{"htmlcov/index.html", "htmlcov/x.css"}, "htmlcov/index.html"},
		{"parts, entry given", []apitest.Part{{Name: "file", FileName: "site/a.html", Data: []byte("<p>")}, {Name: "file", FileName: "site/b.html", Data: []byte("<p>")}, formField("entry", "b.html")},
			"b.html", []string{"a.html", "b.html"}, "b.html"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := mustSite(t, uploadSite(t, e, p.ID, c.parts...))
			if rep.Entry != c.entry || rep.FilePath != fmt.Sprintf("/uploads/sites/%d/%s", rep.ID, c.entry) || rep.SiteURL != contentURL(rep.ID, c.wantSiteURL) {
				t.Fatalf("entry %q filePath %q siteUrl %q, want entry %q", rep.Entry, rep.FilePath, rep.SiteURL, c.entry)
			}
			m, got := siteFiles(t, e, rep.ID)
			if m.Entry != c.entry {
				t.Fatalf("manifest entry %q", m.Entry)
			}
			if c.files != nil && strings.Join(keys(got), ",") != strings.Join(c.files, ",") {
				t.Fatalf("files %v, want %v", keys(got), c.files)
			}
			if c.name == "explicit entry and root" && (len(got) != 2 || got["index.html"] != "<p>") {
				t.Fatalf("root: files %v", keys(got))
			}
		})
	}
	// Refused: nothing stored, the error names the problem.
	refused := []struct {
		name  string
		parts []apitest.Part
		says  string
	}{
		{"entry not in the site", []apitest.Part{zipPart(t, "a.zip", htmlcov...), formField("entry", "missing.html")}, `entry "missing.html" is not a file of the site`},
		{"entry escapes", []apitest.Part{zipPart(t, "a.zip", htmlcov...), formField("entry", "../index.html")}, "is not a file of the site"},
		{"root not holding every file", []apitest.Part{zipPart(t, "a.zip", htmlcov...), formField("root", "elsewhere")}, `root "elsewhere" is not a folder holding every file`},
		{"root escapes", []apitest.Part{zipPart(t, "a.zip", htmlcov...), formField("root", "../x")}, "invalid root"},
		{"entry for a single file", []apitest.Part{{Name: "file", FileName: "a.html", Data: []byte("<p>")}, formField("entry", "a.html")}, "entry and root are for sites"},
	}
	before, _ := e.Svc.ListReports(t.Context(), &p.ID)
	cas0, man0 := storedObjects(t, e.DataDir)
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			r := uploadSite(t, e, p.ID, c.parts...)
			wantError(t, r, report.Validation)
			if !strings.Contains(errorText(t, r), c.says) {
				t.Fatalf("error %s, want it to say %q", r.Body, c.says)
			}
		})
	}
	after, _ := e.Svc.ListReports(t.Context(), &p.ID)
	cas1, man1 := storedObjects(t, e.DataDir)
	if len(after) != len(before) || len(man1) != len(man0) || len(cas1) != len(cas0) {
		t.Fatalf("refused uploads stored something: reports %d->%d manifests %v->%v objects %d->%d", len(before), len(after), man0, man1, len(cas0), len(cas1))
	}
}

// TestSiteUpdate: a site can be renamed and relabelled; its fileType cannot
// change; a non-html archive upload is refused with the reason.
func TestSiteUpdate(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("upd")
	rep := mustSite(t, uploadSite(t, e, p.ID, zipPart(t, "htmlcov.zip", htmlcov...)))
	path := fmt.Sprintf("/api/reports/%d", rep.ID)
	r := e.PostJSON("PUT", path, map[string]any{"fileName": "coverage.zip", "branch": "main"})
	var up report.Report
	r.JSON(t, &up)
	if r.StatusCode != 200 || up.FileName != "coverage.zip" || up.Kind != report.KindSite || up.Entry != "index.html" || up.FilePath != rep.FilePath || *up.Branch != "main" || up.SiteURL == "" {
		t.Fatalf("rename: %d %s", r.StatusCode, r.Body)
	}
	r = e.PostJSON("PUT", path, map[string]any{"fileType": "md"})
	wantError(t, r, report.Validation)
	if !strings.Contains(string(r.Body), "is a site") {
		t.Fatalf("type change of a site: %s", r.Body)
	}
	if r := e.PostJSON("PUT", path, map[string]any{"fileType": "html", "fileName": "x"}); r.StatusCode != 200 {
		t.Fatalf("html stays html: %d %s", r.StatusCode, r.Body)
	}
	// The download is named after the file name, .zip once.
	dl := e.Get(path + "/download")
	if cd := dl.Header.Get("Content-Disposition"); dl.StatusCode != 200 || !strings.Contains(cd, `filename="x.zip"`) {
		t.Fatalf("download: %d %q", dl.StatusCode, cd)
	}
	// An archive declared as another type.
	body, ct := apitest.Multipart(formField("projectId", fmt.Sprint(p.ID)), formField("fileType", "pdf"), zipPart(t, "site.zip", htmlcov...))
	r = e.Do("POST", "/api/reports", body, ct)
	wantError(t, r, report.Validation)
	if !strings.Contains(string(r.Body), "a site takes fileType html") {
		t.Fatalf("zip as pdf: %s", r.Body)
	}
	// A single html file's manifest for the content origin.
	single := e.MustUpload(p.ID, "Cover Report.html", report.HTML, []byte("<html><script>1</script></html>"))
	if single.Kind != report.KindFile || single.SiteURL != contentURL(single.ID, "Cover Report.html") {
		t.Fatalf("single html: %+v", single)
	}
	m, files := siteFiles(t, e, single.ID)
	if m.Entry != "Cover Report.html" || files["Cover Report.html"] != "<html><script>1</script></html>" || m.Files[0].ContentType != "text/html; charset=utf-8" {
		t.Fatalf("single-file manifest %+v", m)
	}
	md := e.MustUpload(p.ID, "notes.md", report.MD, []byte("# hi"))
	if md.SiteURL != "" {
		t.Fatalf("md has a siteUrl: %+v", md)
	}
	if _, err := e.Svc.SiteManifest(t.Context(), md.ID); !report.IsKind(err, report.NotFound) {
		t.Fatalf("manifest of an md report: %v", err)
	}
}

// TestSiteWithoutContentOrigin: no ContentURL hook: no siteUrl, and the
// preview of a site says why it cannot be shown.
func TestSiteWithoutContentOrigin(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.Content.Enabled = false }})
	p := e.CreateProject("plain")
	rep := mustSite(t, uploadSite(t, e, p.ID, zipPart(t, "htmlcov.zip", htmlcov...)))
	if rep.SiteURL != "" {
		t.Fatalf("siteUrl without a content origin: %q", rep.SiteURL)
	}
	for _, path := range []string{fmt.Sprintf("/api/reports/%d/preview", rep.ID), rep.FilePath} {
		r := e.Get(path)
		wantError(t, r, report.NotFound)
		if !strings.Contains(string(r.Body), "this report is a site; no content origin is configured") {
			t.Fatalf("%s: %s", path, r.Body)
		}
	}
	// The objects behind sites are not served here.
	cas, man := storedObjects(t, e.DataDir)
	// Nor is the store's journal (a pack kept aside is a real file there).
	kept := filepath.Join(e.DataDir, "uploads", ".journal", "probe.damaged")
	if err := os.WriteFile(kept, []byte("a pack's bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/uploads/cas/" + cas[0], "/uploads/sites/" + man[0], "/uploads/.journal/probe.damaged"} {
		if r := e.Get(p); r.StatusCode == http.StatusOK {
			t.Fatalf("%s served: %s", p, r.Body)
		}
	}
}

// TestSiteDedupDeleteGC: two uploads of one site store each object once;
// deleting a site removes its manifest and the objects no other manifest
// references (grace 0); a project delete cascades the same way; a restart
// (start-up sweep) keeps every object a manifest references and removes a
// manifest no row owns.
func TestSiteDedupDeleteGC(t *testing.T) {
	dataDir := t.TempDir()
	opts := apitest.Options{DataDir: dataDir, Config: func(c *config.Config) { c.Sites.GCGrace = 0 }}
	e := startSites(t, opts)
	p := e.CreateProject("dedup")
	a := mustSite(t, uploadSite(t, e, p.ID, zipPart(t, "a.zip", htmlcov...)))
	b := mustSite(t, uploadSite(t, e, p.ID, apitest.Part{Name: "file", FileName: "b.tgz", Data: gz(t, tarOf(t, htmlcov...))}))
	cas, man := storedObjects(t, e.DataDir)
	if len(cas) != len(htmlcov) || len(man) != 2 {
		t.Fatalf("two uploads of one site: %d objects (want %d), manifests %v", len(cas), len(htmlcov), man)
	}
	// c shares index.html with a and b, and has one file of its own.
	other := []entry{htmlcov[0], {"htmlcov/own.js", "own"}}
	c := mustSite(t, uploadSite(t, e, p.ID, zipPart(t, "c.zip", other...)))
	if cas, _ := storedObjects(t, e.DataDir); len(cas) != len(htmlcov)+1 {
		t.Fatalf("after c: %d objects", len(cas))
	}
	// Deleting a keeps everything: b references the same objects.
	if r := e.Do("DELETE", fmt.Sprintf("/api/reports/%d", a.ID), nil, ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("delete a: %d %s", r.StatusCode, r.Body)
	}
	cas, man = storedObjects(t, e.DataDir)
	if len(cas) != len(htmlcov)+1 || strings.Join(man, ",") != fmt.Sprintf("%d.json,%d.json", b.ID, c.ID) {
		t.Fatalf("after deleting a: %d objects, manifests %v", len(cas), man)
	}
	// Deleting b leaves c's two objects.
	e.Do("DELETE", fmt.Sprintf("/api/reports/%d", b.ID), nil, "")
	if cas, _ := storedObjects(t, e.DataDir); len(cas) != 2 {
		t.Fatalf("after deleting b: %v", cas)
	}
	if _, got := siteFiles(t, e, c.ID); got["index.html"] != htmlcov[0].data || got["own.js"] != "own" {
		t.Fatalf("c after GC: %v", got)
	}
	// A restart keeps c whole and drops a manifest no row owns.
	orphan := filepath.Join(e.DataDir, "uploads", "sites", "999.json")
	if err := os.WriteFile(orphan, []byte(`{"version":1,"entry":"","totalBytes":0,"files":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = startSites(t, opts)
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("orphan manifest after the start-up sweep: %v", err)
	}
	if _, got := siteFiles(t, e, c.ID); len(got) != 2 {
		t.Fatalf("c after a restart: %v", got)
	}
	// A project delete removes its sites and their objects.
	if r := e.Do("DELETE", fmt.Sprintf("/api/projects/%d", p.ID), nil, ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("delete project: %d %s", r.StatusCode, r.Body)
	}
	if cas, man := storedObjects(t, e.DataDir); len(cas) != 0 || len(man) != 0 {
		t.Fatalf("after the project delete: objects %v manifests %v", cas, man)
	}
}

// TestSitePrune: retention removes site reports like files: rows, then
// manifests, then the objects only they referenced.
func TestSitePrune(t *testing.T) {
	e := startSites(t, apitest.Options{Config: func(c *config.Config) { c.Sites.GCGrace = 0 }})
	p := e.CreateProject("prune")
	var last report.Report
	for i := range 3 {
		es := append([]entry{}, htmlcov...)
		es = append(es, entry{"htmlcov/run.txt", fmt.Sprint("run ", i)})
		last = mustSite(t, uploadSite(t, e, p.ID, zipPart(t, "htmlcov.zip", es...)))
	}
	keep := 1
	res, err := e.Svc.Prune(t.Context(), service.PruneRequest{ProjectID: &p.ID, Override: report.Retention{KeepLast: &keep}, Trigger: "test"})
	if err != nil || len(res.Reports) != 2 {
		t.Fatalf("prune: %+v %v", res, err)
	}
	cas, man := storedObjects(t, e.DataDir)
	if len(cas) != len(htmlcov)+1 || strings.Join(man, ",") != fmt.Sprintf("%d.json", last.ID) {
		t.Fatalf("after the prune: %d objects, manifests %v", len(cas), man)
	}
	if _, got := siteFiles(t, e, last.ID); got["run.txt"] != "run 2" {
		t.Fatalf("the kept site: %v", got)
	}
}
