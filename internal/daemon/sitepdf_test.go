package daemon

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testfixture"
)

// GET /pdf?scope=site of a go tool cover -html report, through the real
// daemon and engines: one bookmark per source file; the default print
// stays one document without bookmarks; bad scopes are refused.
func TestSitePDFScopeOfGoCoverReport(t *testing.T) {
	c := testConfig(t, t.TempDir())
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "cover")
	id := uploadFixture(t, base, proj.ID, "html", "cover.html", sitegen.GoCover(t).EntryPage(t))
	md := uploadFixture(t, base, proj.ID, "md", "a.md", []byte("# a"))

	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := httpClient.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	st, pdf := get(fmt.Sprintf("/api/reports/%d/pdf?scope=site", id))
	if st != http.StatusOK || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("scope=site: %d %.200s", st, pdf)
	}
	titles := testfixture.PDFOutline(t, pdf)
	if len(titles) != 3 {
		t.Fatalf("bookmarks %q, want one per file", titles)
	}
	for i, name := range []string{"add.go", "mul.go", "strs.go"} { // go tool cover lists files sorted
		if !strings.Contains(titles[i], name) {
			t.Errorf("bookmark %d is %q, want %s", i, titles[i], name)
		}
	}
	if text := testfixture.PDFText(t, pdf); !strings.Contains(text, "func Add(") || !strings.Contains(text, "func Mul(") ||
		!strings.Contains(text, "func Shout(") {
		t.Errorf("scope=site text lacks a file:\n%s", text)
	}
	st, entry := get(fmt.Sprintf("/api/reports/%d/pdf?scope=entry", id))
	if st != http.StatusOK || bytes.Equal(entry, pdf) {
		t.Fatalf("scope=entry: %d, same bytes as scope=site: %v", st, bytes.Equal(entry, pdf))
	}
	for path, want := range map[string]string{
		fmt.Sprintf("/api/reports/%d/pdf?scope=all", id):               "ValidationError",
		fmt.Sprintf("/api/reports/%d/pdf?scope=site&pageRanges=1", id): "ValidationError",
		fmt.Sprintf("/api/reports/%d/pdf?scope=site", md):              "ValidationError",
		fmt.Sprintf("/api/reports/%d/pdf?scope=site&scope=entry", id):  "ValidationError",
	} {
		st, body := get(path)
		var e apiError
		json.Unmarshal(body, &e)
		if st == http.StatusOK || e.Type != want {
			t.Errorf("%s: %d %s, want %s", path, st, body, want)
		}
	}
}

// coverageZip generates a real coverage.py HTML report (Debian's
// python3-coverage) of a few modules and returns it zipped under htmlcov/,
// with the modules' names and the report's page count.
func coverageZip(t *testing.T) ([]byte, []string, int) {
	t.Helper()
	cov, err := exec.LookPath("python3-coverage")
	if err != nil {
		t.Skip("python3-coverage is not installed (apt-get install python3-coverage)")
	}
	dir := t.TempDir()
	mods := []string{"gamma.py", "kappa.py", "sigma.py"}
	main := ""
	for _, m := range mods {
		name := strings.TrimSuffix(m, ".py")
		src := fmt.Sprintf("def %s_half(x):\n    if x %% 2:\n        return None\n    return x // 2\n", name)
		if err := os.WriteFile(filepath.Join(dir, m), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		main += fmt.Sprintf("import %s\n%s.%s_half(4)\n", name, name, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.py"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	mods = append(mods, "main.py")
	for _, args := range [][]string{{"run", "--source=.", "main.py"}, {"html", "-d", "htmlcov"}} {
		cmd := exec.Command(cov, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("python3-coverage %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	pages := 0
	root := filepath.Join(dir, "htmlcov")
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasSuffix(rel, ".html") {
			pages++
		}
		w, err := zw.Create("htmlcov/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mods, pages
}

// A coverage.py site uploaded as a zip prints through the real daemon: the
// entry PDF holds the index with its totals, scope=site every page with a
// bookmark each; both are cached, and with convert_on_upload the entry
// print is made in the background at upload.
func TestSitePDFOfCoverageSite(t *testing.T) {
	z, mods, pages := coverageZip(t)
	c := testConfig(t, t.TempDir())
	c.ConvertOnUpload = true
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "cov")
	id := uploadFixture(t, base, proj.ID, "html", "htmlcov.zip", z)
	prepared := `reportd_pdf_conversions_total{result="ok",type="html"} 1`
	for end := time.Now().Add(2 * time.Minute); !strings.Contains(string(getBody(t, base+"/metrics")), prepared); {
		if time.Now().After(end) {
			t.Fatal("the site's entry was not printed in the background after its upload")
		}
		time.Sleep(100 * time.Millisecond)
	}

	entry := getBody(t, fmt.Sprintf("%s/api/reports/%d/pdf", base, id))
	text := testfixture.PDFText(t, entry)
	for _, want := range append([]string{"Coverage report", "Total"}, mods...) {
		if !strings.Contains(text, want) {
			t.Errorf("entry PDF lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "def gamma_half") {
		t.Error("the entry PDF holds a source page")
	}
	if m := string(getBody(t, base+"/metrics")); !strings.Contains(m, "reportd_pdf_cache_hits_total 1") {
		t.Error("the entry PDF was not answered from the print made at upload")
	}
	all := getBody(t, fmt.Sprintf("%s/api/reports/%d/pdf?scope=site", base, id))
	text = testfixture.PDFText(t, all)
	for _, m := range mods {
		if !strings.Contains(text, "Coverage for "+m) {
			t.Errorf("site PDF lacks the page of %s", m)
		}
	}
	if bms := testfixture.PDFOutline(t, all); len(bms) != pages {
		t.Errorf("site PDF has %d bookmarks, the site %d pages", len(bms), pages)
	}
	if again := getBody(t, fmt.Sprintf("%s/api/reports/%d/pdf?scope=site", base, id)); !bytes.Equal(again, all) {
		t.Error("the repeat of scope=site differs")
	}
}
