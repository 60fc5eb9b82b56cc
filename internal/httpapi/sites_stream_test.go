package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/sitegen"
)

func zst(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// upload posts parts as they are, in their order.
func upload(e *apitest.Env, parts ...apitest.Part) *apitest.Response {
	body, ct := apitest.Multipart(parts...)
	return e.Do("POST", "/api/reports", body, ct)
}

// TestTarSitesReadAsTheyArrive: a tar archive declared html before it
// comes is read as it arrives (reportctl sends a folder as a .tar.zst,
// fields first); after it, from the staged copy. Both give the same site,
// and the same refusal.
func TestTarSitesReadAsTheyArrive(t *testing.T) {
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("streams")
	project := apitest.Part{Name: "projectId", Data: []byte(fmt.Sprint(p.ID))}
	html := apitest.Part{Name: "fileType", Data: []byte("html")}
	raw := tarOf(t, htmlcov...)
	for name, data := range map[string][]byte{"tar.zst": zst(t, raw), "tar.gz": gz(t, raw), "tar": raw} {
		file := apitest.Part{Name: "file", FileName: "htmlcov", Data: data}
		for order, parts := range map[string][]apitest.Part{
			"fields first": {project, html, file},
			"file first":   {file, project, html},
		} {
			t.Run(name+" "+order, func(t *testing.T) {
				rep := mustSite(t, upload(e, parts...))
				if rep.FileName != "htmlcov" || rep.Entry != "index.html" || rep.Files != len(htmlcov) {
					t.Fatalf("site fields: %+v", rep)
				}
				_, got := siteFiles(t, e, rep.ID)
				sameFiles(t, got, want(htmlcov, "htmlcov/"))
			})
		}
	}
	bad := zst(t, tarOf(t, entry{"site/index.html", "<p>"}, entry{"site/../escape.html", "x"}))
	var msgs []string
	for _, parts := range [][]apitest.Part{
		{project, html, {Name: "file", FileName: "site.tar.zst", Data: bad}},
		{{Name: "file", FileName: "site.tar.zst", Data: bad}, project, html},
	} {
		r := upload(e, parts...)
		if r.StatusCode == http.StatusCreated {
			t.Fatalf("hostile name accepted: %s", r.Body)
		}
		msgs = append(msgs, fmt.Sprint(r.StatusCode, " ", string(r.Body)))
	}
	if msgs[0] != msgs[1] || !strings.Contains(msgs[0], "escape.html") {
		t.Fatalf("refusals differ by field order: %q", msgs)
	}
	// A streamed site refused after its arrival (no such project) leaves
	// nothing staged behind (files no upload stored before).
	fresh := zst(t, tarOf(t, entry{"new/index.html", "<p>new</p>"}, entry{"new/app.js", "let fresh = 1"}))
	r := upload(e, apitest.Part{Name: "projectId", Data: []byte("9999")}, html, apitest.Part{Name: "file", FileName: "new", Data: fresh})
	if r.StatusCode == http.StatusCreated || !strings.Contains(string(r.Body), "NotFoundError") {
		t.Fatalf("missing project: %d %s", r.StatusCode, r.Body)
	}
	// The staging folders of the sites stored before go in the background.
	var left []os.DirEntry
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left, _ = os.ReadDir(filepath.Join(e.DataDir, "tmp")); len(left) == 0 {
			break
		}
	}
	if len(left) != 0 {
		t.Fatalf("left in tmp/: %v", left)
	}
	if cas, _ := storedObjects(t, e.DataDir); len(cas) != 5 {
		t.Fatalf("content objects = %q, want the 5 of htmlcov (refusals store nothing)", cas)
	}
}

// TestStreamedRatioFallsBack: the ratio checked while an archive arrives
// is against the bytes so far, stricter than against the whole archive.
// A site whose first megabytes are zeros is refused that way, and then
// ingested from the staged copy, whose whole-archive ratio passes.
func TestStreamedRatioFallsBack(t *testing.T) {
	const ratio = 10
	// 16 MiB: 512 KiB allowed past the ratio while the archive arrives.
	e := startSites(t, apitest.Options{Service: func(c *service.Config) { c.Sites.MaxRatio, c.Sites.MaxBytes = ratio, 16<<20 }})
	p := e.CreateProject("ratio")
	noise := make([]byte, 600<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	var tgz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&tgz, gzip.BestCompression)
	zw.Write(tarOf(t, entry{"zeros.bin", string(make([]byte, 4<<20))}, entry{"index.html", "<p>"}, entry{"noise.bin", string(noise)}))
	zw.Close()
	// Read as it arrives, it is refused early...
	dir := t.TempDir()
	st, err := local.Open(filepath.Join(dir, "objects"), filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = site.Stage(t.Context(), st, site.Stream(bytes.NewReader(tgz.Bytes()), "tar.gz"),
		site.Options{MaxRatio: ratio, MaxBytes: 16 << 20, TempDir: filepath.Join(dir, "tmp")})
	if err == nil || !strings.Contains(err.Error(), "times its size") {
		t.Fatalf("streamed read: %v, want the ratio refusal", err)
	}
	// ...and the upload still succeeds.
	rep := mustSite(t, uploadSite(t, e, p.ID, apitest.Part{Name: "file", FileName: "ratio.tar.gz", Data: tgz.Bytes()}))
	if rep.Files != 3 {
		t.Fatalf("files = %d", rep.Files)
	}
}

// tarDir is the tar of dir's files, named below top/.
func tarDir(t *testing.T, dir, top string) []byte {
	t.Helper()
	var es []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		es = append(es, entry{top + "/" + filepath.ToSlash(rel), string(b)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tarOf(t, es...)
}

// TestStreamedSiteDetected: the generator, summary and results of a site
// read as it arrived (detected from its staged files while they are
// committed) are those of the same site read from the staged copy.
func TestStreamedSiteDetected(t *testing.T) {
	cov := sitegen.CoveragePy(t)
	e := startSites(t, apitest.Options{})
	p := e.CreateProject("detected")
	project := apitest.Part{Name: "projectId", Data: []byte(fmt.Sprint(p.ID))}
	html := apitest.Part{Name: "fileType", Data: []byte("html")}
	file := apitest.Part{Name: "file", FileName: "htmlcov", Data: zst(t, tarDir(t, cov.Dir, "htmlcov"))}
	streamed := mustSite(t, upload(e, project, html, file))
	staged := mustSite(t, upload(e, file, project, html))
	if streamed.Generator != "coverage.py" || streamed.Summary == nil || streamed.Summary.Lines == nil {
		t.Fatalf("streamed site: generator %q, summary %+v", streamed.Generator, streamed.Summary)
	}
	a, err := e.Svc.ReportRecord(t.Context(), streamed.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Svc.ReportRecord(t.Context(), staged.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Generator != b.Generator || !reflect.DeepEqual(a.Summary, b.Summary) || !reflect.DeepEqual(a.Results, b.Results) {
		t.Fatalf("streamed %q %+v %+v, staged %q %+v %+v", a.Generator, a.Summary, a.Results, b.Generator, b.Summary, b.Results)
	}
}
