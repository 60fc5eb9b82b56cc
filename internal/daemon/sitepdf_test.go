package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// goCoverHTML is the report go tool cover -html writes for a small module
// of three files, generated here with the real tool.
func goCoverHTML(t *testing.T) []byte {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/three\n\ngo 1.21\n",
		"one.go":    "package three\n\nfunc One() int { return 1 }\n",
		"two.go":    "package three\n\nfunc Two(x int) int {\n\tif x > 2 {\n\t\treturn x\n\t}\n\treturn 2\n}\n",
		"three.go":  "package three\n\nfunc Three() string { return \"three\" }\n",
		"a_test.go": "package three\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) { One(); Two(5) }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"test", "-coverprofile=c.out", "."}, {"tool", "cover", "-html=c.out", "-o", "out.html"}} {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.html"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// GET /pdf?scope=site of a go tool cover -html report, through the real
// daemon and engines: one bookmark per source file; the default print
// stays one document without bookmarks; bad scopes are refused.
func TestSitePDFScopeOfGoCoverReport(t *testing.T) {
	c := testConfig(t, t.TempDir())
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "cover")
	id := uploadFixture(t, base, proj.ID, "html", "cover.html", goCoverHTML(t))
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
	bms, err := api.Bookmarks(bytes.NewReader(pdf), nil)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, b := range bms {
		titles = append(titles, b.Title)
	}
	if len(titles) != 3 {
		t.Fatalf("bookmarks %q, want one per file", titles)
	}
	for i, name := range []string{"one.go", "three.go", "two.go"} { // go tool cover lists files sorted
		if !strings.Contains(titles[i], name) {
			t.Errorf("bookmark %d is %q, want %s", i, titles[i], name)
		}
	}
	if text := pdfToText(t, pdf); !strings.Contains(text, "func One()") || !strings.Contains(text, "func Three()") ||
		!strings.Contains(text, "func Two(x int)") {
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

func pdfToText(t *testing.T, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext is not installed (apt-get install poppler-utils)")
	}
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
