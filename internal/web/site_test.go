package web_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/web"
)

// siteEnv runs reportd in this process with a content origin of one
// origin per report (http://{id}.localhost:<port>) and the dashboard that
// may frame it. Nothing listens on that port here (the content origin's
// own listener is tested where it is built): these tests check what the
// dashboard points where, not what the framed page shows.
func siteEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	template := fmt.Sprintf("http://{id}.localhost:%d", port)
	src, err := web.FrameSource(template)
	if err != nil {
		t.Fatal(err)
	}
	e := apitest.Start(t, apitest.Options{HTTP: func(hc *httpapi.Config) {
		hc.ContentURL = func(id int64, file string) string {
			return strings.ReplaceAll(template, "{id}", fmt.Sprint(id)) + "/" + (&url.URL{Path: file}).EscapedPath()
		}
		hc.Dashboard = web.New(web.Options{FrameSources: []string{src}})
	}})
	return e, template
}

// siteZip is a small site below one top folder: an entry page
// (coverage.py's real template), its assets, a data file and sub-pages.
func siteZip(t *testing.T) ([]byte, map[string]int) {
	t.Helper()
	index, err := os.ReadFile("../detect/testdata/coveragepy-6.5.0-index.html")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"htmlcov/index.html":             index,
		"htmlcov/style.css":              []byte("body { font-family: sans-serif; }\n"),
		"htmlcov/coverage_html.js":       []byte("document.documentElement.dataset.ran = 'yes';\n"),
		"htmlcov/data/status.json":       []byte(`{"format": 2}`),
		"htmlcov/pkg/mod_py.html":        []byte("<!doctype html><title>mod.py</title><p>mod.py</p>\n"),
		"htmlcov/pkg/deep/other_py.html": []byte("<!doctype html><title>other.py</title><p>other.py</p>\n"),
	}
	sizes := map[string]int{}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		sizes[strings.TrimPrefix(name, "htmlcov/")] = len(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sizes
}

func uploadSite(t *testing.T, e *apitest.Env, project int64, name string, zipped []byte) report.Report {
	t.Helper()
	body, ct := apitest.Multipart(
		apitest.Part{Name: "projectId", Data: []byte(fmt.Sprint(project))},
		apitest.Part{Name: "fileType", Data: []byte("html")},
		apitest.Part{Name: "name", Data: []byte("coverage")},
		apitest.Part{Name: "file", FileName: name, Data: zipped})
	r := e.Do("POST", "/api/reports", body, ct)
	if r.StatusCode != 201 {
		t.Fatalf("upload %s: %d %s", name, r.StatusCode, r.Body)
	}
	var rep report.Report
	r.JSON(t, &rep)
	return rep
}

// TestSiteReader: a site uploaded as a real zip shows, in the reader, its
// generator, file count and size, a frame of its siteUrl (sandboxed
// without top navigation), an "open in new tab" link, a file tree whose
// entries open in the frame, and its copyable stable links.
func TestSiteReader(t *testing.T) {
	e, _ := siteEnv(t)
	p := e.CreateProject("web")
	zipped, sizes := siteZip(t)
	rep := uploadSite(t, e, p.ID, "htmlcov.zip", zipped)
	if rep.Kind != report.KindSite || rep.SiteURL == "" || rep.Files != len(sizes) {
		t.Fatalf("uploaded site: kind %q, siteUrl %q, files %d", rep.Kind, rep.SiteURL, rep.Files)
	}
	var total int64
	for _, n := range sizes {
		total += int64(n)
	}
	if rep.Bytes != total {
		t.Fatalf("site bytes %d, want %d", rep.Bytes, total)
	}

	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", e.URL, rep.ID)))
	b.waitFor("the site frame", `!!document.querySelector('iframe.frame-site')`, 30*time.Second)
	frame := eval[map[string]string](b, `(() => { const f = document.querySelector('iframe.frame-site'); return { src: f.src, sandbox: f.getAttribute('sandbox') }; })()`)
	if frame["src"] != rep.SiteURL {
		t.Errorf("frame src %q, want siteUrl %q", frame["src"], rep.SiteURL)
	}
	if !strings.Contains(frame["sandbox"], "allow-scripts") || !strings.Contains(frame["sandbox"], "allow-same-origin") || strings.Contains(frame["sandbox"], "allow-top-navigation") {
		t.Errorf("site frame sandbox %q: scripts on their own origin, no top navigation", frame["sandbox"])
	}
	tab := eval[map[string]string](b, `(() => { const a = document.getElementById('open-site'); return { href: a.href, rel: a.rel, target: a.target, text: a.textContent }; })()`)
	if tab["href"] != rep.SiteURL || tab["rel"] != "noopener noreferrer" || tab["target"] != "_blank" {
		t.Errorf("open in new tab: %v", tab)
	}
	// The whole-site PDF link (printed by the engines: internal/cli's print script).
	if href := eval[string](b, `document.getElementById('get-site-pdf').href`); !strings.HasSuffix(href, fmt.Sprintf("/api/reports/%d/pdf?scope=site", rep.ID)) {
		t.Errorf("PDF of all pages links to %q", href)
	}
	if got := b.text(".site-files-count"); got != fmt.Sprintf("%d files", len(sizes)) {
		t.Errorf("file count %q", got)
	}
	if got, want := b.text(".site-bytes"), fmt.Sprintf("%.1f KB", float64(total)/1024); got != want {
		t.Errorf("size %q, want %q", got, want)
	}
	// Sites are not run through the detector yet: no generator, none shown.
	if got := b.text(".reader-generator"); got != rep.Generator {
		t.Errorf("generator shown %q, want %q", got, rep.Generator)
	}
	if got := b.text(".reader-meta"); !strings.HasPrefix(got, "HTML site") {
		t.Errorf("reader line %q", got)
	}

	t.Log("file tree: top-level files and folders; folders open on demand")
	b.waitFor("the file tree", `document.querySelector('.site-tree')?.dataset.state === 'ready'`, 30*time.Second)
	top := eval[[]string](b, `[...document.querySelectorAll('.site-tree > .tree > li > a.tree-file, .site-tree > .tree > li > details > summary .tree-name')].map((e) => e.dataset?.path ?? e.textContent)`)
	if strings.Join(top, ",") != "data/,pkg/,coverage_html.js,index.html,style.css" {
		t.Errorf("top level of the tree: %v", top)
	}
	if got := eval[string](b, `document.querySelector('.site-tree a[aria-current=page]')?.dataset.path ?? ''`); got != "index.html" {
		t.Errorf("current file %q, want the entry", got)
	}
	b.click(`.tree-dir[data-path="pkg"] > summary`)
	b.click(`.tree-dir[data-path="pkg/deep"] > summary`)
	b.click(`a.tree-file[data-path="pkg/deep/other_py.html"]`)
	want := strings.TrimSuffix(rep.SiteURL, "index.html") + "pkg/deep/other_py.html"
	b.waitFor("the frame to open the file", fmt.Sprintf(`document.querySelector('iframe.frame-site').src === %s`, jsString(want)), 10*time.Second)
	if got := b.text(".site-current"); got != "pkg/deep/other_py.html" {
		t.Errorf("the bar names %q as shown", got)
	}
	if got := eval[string](b, `document.querySelector('.site-tree a[aria-current=page]')?.dataset.path ?? ''`); got != "pkg/deep/other_py.html" {
		t.Errorf("current file %q after the click", got)
	}

	t.Log("stable links")
	b.click(".stable-links > summary")
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		checkContrast(t, b, "the site reader ("+scheme+")")
	}
	b.colorScheme("")
	links := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('.stable-links input')].map((i) => [i.id, i.value]))`)
	base := fmt.Sprintf("%s/p/%s/latest", e.URL, p.Slug)
	for id, want := range map[string]string{"link-project": base, "link-name": base + "/coverage?type=html", "link-site": base + "/coverage/site?type=html",
		"link-badge": fmt.Sprintf("%s/p/%s/coverage/badge.svg?type=html", e.URL, p.Slug)} {
		if links[id] != want {
			t.Errorf("%s = %q, want %q", id, links[id], want)
		}
	}

	t.Log("phone width: the tree above the frame, nothing scrolls sideways")
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload())
	b.waitFor("the file tree", `document.querySelector('.site-tree')?.dataset.state === 'ready'`, 30*time.Second)
	b.click(".stable-links > summary")
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the site reader scrolls sideways at phone width: %dpx wide", w)
	}
	if !eval[bool](b, `document.querySelector('.site-files').getBoundingClientRect().bottom <= document.querySelector('iframe.frame-site').getBoundingClientRect().top`) {
		t.Error("at phone width the file tree is not above the frame")
	}
	b.do(chromedp.EmulateViewport(1280, 800))
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems (a frame-src refusal among them?):\n%s", strings.Join(p, "\n"))
	}
}

// TestSingleHTMLFromContentOrigin: a single-file HTML report with a
// siteUrl (here coverage.py's real template, so its generator and figures
// show) is framed from the content origin too, without a file tree; its
// stable links offer the site link.
func TestSingleHTMLFromContentOrigin(t *testing.T) {
	e, _ := siteEnv(t)
	p := e.CreateProject("web")
	index, err := os.ReadFile("../detect/testdata/coveragepy-6.5.0-index.html")
	if err != nil {
		t.Fatal(err)
	}
	rep := e.MustUpload(p.ID, "nightly-tests.html", report.HTML, index)
	var got report.Report
	e.Get(fmt.Sprintf("/api/reports/%d", rep.ID)).JSON(t, &got)
	if got.SiteURL == "" || !strings.HasSuffix(got.SiteURL, "/nightly-tests.html") {
		t.Fatalf("siteUrl %q", got.SiteURL)
	}
	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", e.URL, rep.ID)))
	b.waitFor("the site frame", `!!document.querySelector('iframe.frame-site')`, 30*time.Second)
	if src := eval[string](b, `document.querySelector('iframe.frame-site').src`); src != got.SiteURL {
		t.Errorf("frame src %q, want %q", src, got.SiteURL)
	}
	if n := b.count(".site-files, iframe.frame-html"); n != 0 {
		t.Errorf("%d file trees or sandboxed API-origin frames for a single file", n)
	}
	if href := eval[string](b, `document.getElementById('open-site')?.href ?? ''`); href != got.SiteURL {
		t.Errorf("open in new tab %q", href)
	}
	if got.Generator != "coverage.py" || b.text(".reader-generator") != "coverage.py" || !strings.Contains(b.text(".reader-bar .report-summary"), "% lines") {
		t.Errorf("generator %q shown as %q, figures %q", got.Generator, b.text(".reader-generator"), b.text(".reader-bar .report-summary"))
	}
	b.waitFor("the links by slug", `document.querySelector('#link-project')?.value.includes('/p/web/')`, 30*time.Second)
	b.click(".stable-links > summary")
	if link := eval[string](b, `document.getElementById('link-site')?.value ?? ''`); link != fmt.Sprintf("%s/p/web/latest/nightly-tests/site?type=html", e.URL) {
		t.Errorf("site link %q", link)
	}
	var list struct {
		Count int `json:"count"`
		Files []struct {
			Path string `json:"path"`
			URL  string `json:"url"`
		} `json:"files"`
	}
	r := e.Get(fmt.Sprintf("/api/reports/%d/files", rep.ID))
	if err := json.Unmarshal(r.Body, &list); err != nil || list.Count != 1 || list.Files[0].URL != got.SiteURL {
		t.Errorf("files of a single html report: %s", r.Body)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}

// TestSiteWithoutContentOrigin: a daemon without a content origin still
// shows a site's facts and its file list (without links, nothing to open
// them on) and says why no page is shown; the download is the site's zip.
func TestSiteWithoutContentOrigin(t *testing.T) {
	e := apitest.Start(t, apitest.Options{HTTP: func(hc *httpapi.Config) { hc.ContentURL = nil }})
	p := e.CreateProject("web")
	zipped, sizes := siteZip(t)
	rep := uploadSite(t, e, p.ID, "htmlcov.zip", zipped)
	if rep.SiteURL != "" {
		t.Fatalf("siteUrl %q without a content origin", rep.SiteURL)
	}
	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", e.URL, rep.ID)))
	b.waitText(".viewer-site", "No content origin")
	b.waitFor("the file list", `document.querySelector('.site-tree')?.dataset.state === 'ready'`, 30*time.Second)
	if n := b.count("iframe, #open-site, .site-tree a"); n != 0 {
		t.Errorf("%d frames or links without a content origin", n)
	}
	if got := b.text(".site-files-count"); got != fmt.Sprintf("%d files", len(sizes)) {
		t.Errorf("file count %q", got)
	}
	if n := b.count(".site-tree span.tree-file"); n != 3 { // the top level: index.html, style.css, coverage_html.js
		t.Errorf("%d files listed at the top level, want 3", n)
	}
	dl := eval[map[string]string](b, `(() => { const a = document.getElementById('download-original'); return { href: a.getAttribute('href'), name: a.getAttribute('download'), text: a.textContent }; })()`)
	if dl["href"] != fmt.Sprintf("api/reports/%d/download", rep.ID) || dl["name"] != "htmlcov.zip" || dl["text"] != "Download (.zip)" {
		t.Errorf("download %v", dl)
	}
	// The link really gets the site: a zip with every file.
	head := eval[string](b, `fetch(document.getElementById('download-original').href).then((r) => r.arrayBuffer()).then((b) => String.fromCharCode(...new Uint8Array(b.slice(0, 2))) + ':' + b.byteLength)`)
	if !strings.HasPrefix(head, "PK:") {
		t.Errorf("the download is not a zip: %q", head)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}

// TestUploadSiteArchive: a zip dropped in the upload area (the picker
// here) is published as one site, listed with its file count and size,
// and opens in the site reader; a text file named .zip is not sent.
func TestUploadSiteArchive(t *testing.T) {
	e, _ := siteEnv(t)
	p := e.CreateProject("web")
	zipped, sizes := siteZip(t)
	dir := t.TempDir()
	good, fake := dir+"/htmlcov.zip", dir+"/notes.zip"
	if err := os.WriteFile(good, zipped, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, []byte("plain text, not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/projects/%d", e.URL, p.ID)))
	b.waitFor("the upload area", `!!document.getElementById('upload-input')`, 30*time.Second)
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{good, fake}))
	b.waitText(".uploads", "Not sent: the content is not a zip, tar.gz, tar.zst or tar archive, whatever its name says.")
	b.waitText(".uploads", "Published")
	b.waitFor("the site in the list", `document.querySelectorAll('.report').length === 1`, 30*time.Second)
	if got := b.text(".report .report-site"); !strings.HasPrefix(got, fmt.Sprintf("HTML site · %d files · ", len(sizes))) {
		t.Errorf("list row %q", got)
	}
	b.click(".upload-done .upload-actions a")
	b.waitFor("the site reader", `!!document.querySelector('iframe.frame-site')`, 30*time.Second)
	var rep report.Report
	e.Get("/api/reports/1").JSON(t, &rep)
	if src := eval[string](b, `document.querySelector('iframe.frame-site').src`); rep.Kind != report.KindSite || src != rep.SiteURL {
		t.Errorf("kind %q, frame %q, siteUrl %q", rep.Kind, src, rep.SiteURL)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}

// checkPreviewFrame: an HTML report without a siteUrl is the sandboxed
// preview on the dashboard's origin, without allow-same-origin.
func checkPreviewFrame(t *testing.T, b *browser, id string) {
	t.Helper()
	b.waitFor("html frame", `document.querySelector('iframe.frame-html') !== null`, 30*time.Second)
	frame := eval[map[string]string](b, `(() => { const f = document.querySelector('iframe.frame-html'); return { sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src') }; })()`)
	if strings.Contains(frame["sandbox"], "allow-same-origin") || frame["sandbox"] != "allow-scripts allow-popups" {
		t.Errorf("html frame sandbox %q", frame["sandbox"])
	}
	if frame["src"] != "api/reports/"+id+"/preview" {
		t.Errorf("html frame src %q", frame["src"])
	}
}

// TestHTMLReaderWithoutContentOrigin: without a content origin an HTML
// report is the sandboxed preview as before, its script kept from the
// dashboard; no site controls appear.
func TestHTMLReaderWithoutContentOrigin(t *testing.T) {
	e := apitest.Start(t, apitest.Options{HTTP: func(hc *httpapi.Config) { hc.ContentURL = nil }})
	p := e.CreateProject("web")
	rep := e.MustUpload(p.ID, "page.html", report.HTML, []byte("<!doctype html><title>t</title><script>try { parent.document.title = 'owned'; } catch {}</script><p>page</p>\n"))
	b := startBrowser(t)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/reports/%d", e.URL, rep.ID)))
	checkPreviewFrame(t, b, fmt.Sprint(rep.ID))
	b.waitText("h1", "page.html")
	if n := b.count("iframe.frame-site, #open-site, .site-files, #link-site"); n != 0 {
		t.Errorf("%d site controls for an HTML report without a content origin", n)
	}
	if got := eval[string](b, `document.title`); got != "page.html · reportd" {
		t.Errorf("title %q: the report reached the dashboard", got)
	}
}
