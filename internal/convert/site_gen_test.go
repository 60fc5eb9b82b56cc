package convert

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testfixture"
)

// coverageSite generates a real coverage.py HTML report (Debian's
// python3-coverage) of a few generated modules and returns its folder, the
// modules' file names and the total line coverage it reports ("83%").
func coverageSite(t *testing.T) (string, []string, string) {
	t.Helper()
	cov, err := exec.LookPath("python3-coverage")
	if err != nil {
		t.Skip("python3-coverage is not installed (apt-get install python3-coverage)")
	}
	dir := t.TempDir()
	files := map[string]string{}
	var mods []string
	main := ""
	for _, name := range []string{"alpha", "bravo", "charlie", "delta"} {
		files[name+".py"] = fmt.Sprintf("def %s_sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n", name)
		mods = append(mods, name+".py")
		main += fmt.Sprintf("import %s\n%s.%s_sign(1)\n", name, name, name)
	}
	files["main.py"] = main
	mods = append(mods, "main.py")
	writeFiles(t, dir, files)
	run := func(args ...string) string {
		cmd := exec.Command(cov, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python3-coverage %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("run", "--source=.", "main.py")
	run("html", "-d", "out")
	total := regexp.MustCompile(`(?m)^TOTAL\s.*\s(\d+%)\s*$`).FindStringSubmatch(run("report"))
	if total == nil {
		t.Fatal("python3-coverage report printed no TOTAL line")
	}
	return filepath.Join(dir, "out"), mods, total[1]
}

// The entry PDF of a coverage.py site holds its totals; the site PDF holds
// every source file's page, one bookmark per page.
func TestSiteCoveragePy(t *testing.T) {
	testfixture.NeedChromium(t)
	dir, mods, total := coverageSite(t)
	m := sharedManager(t)

	start := time.Now()
	entry := convertOK(t, m, siteJobFor(t, dir, "index.html", "coverage.py", ""))
	tEntry := time.Since(start)
	text := testfixture.PDFText(t, entry)
	testfixture.WantText(t, text, "Total", total)
	testfixture.WantText(t, text, mods...)

	start = time.Now()
	all := convertOK(t, m, siteJobFor(t, dir, "index.html", "coverage.py", report.ScopeSite))
	tSite := time.Since(start)
	text = testfixture.PDFText(t, all)
	testfixture.WantText(t, text, "Total", total)
	for _, mod := range mods {
		testfixture.WantText(t, text, "Coverage for "+mod)
	}
	testfixture.WantText(t, text, "def alpha_sign(x):", "def delta_sign(x):")

	pages, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	titles := testfixture.PDFOutline(t, all)
	if len(titles) != len(pages) {
		t.Errorf("outline has %d entries, the site %d pages: %q", len(titles), len(pages), titles)
	}
	if len(titles) > 0 && titles[0] != "Coverage report" {
		t.Errorf("first bookmark %q, want the index's title", titles[0])
	}
	for _, mod := range mods {
		found := false
		for _, ti := range titles {
			found = found || strings.Contains(ti, mod)
		}
		if !found {
			t.Errorf("no bookmark names %s: %q", mod, titles)
		}
	}
	if n, err := strconv.Atoi(testfixture.PDFInfo(t, all)["Pages"]); err != nil || n < len(pages) {
		t.Errorf("pdfinfo counts %q pages, want at least %d", testfixture.PDFInfo(t, all)["Pages"], len(pages))
	}
	t.Logf("coverage.py site of %d pages: entry PDF %v (%d bytes), scope=site PDF %v (%d bytes, %s pages)",
		len(pages), tEntry, len(entry), tSite, len(all), testfixture.PDFInfo(t, all)["Pages"])
}

// scope=site of a go tool cover -html report prints each source file on
// its own, with a bookmark per file.
func TestSiteGoCoverParts(t *testing.T) {
	testfixture.NeedChromium(t)
	gc := sitegen.GoCover(t)
	pdf := convertOK(t, sharedManager(t), siteJobFor(t, gc.Dir, gc.Entry, "", report.ScopeSite))
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "func Add", "func Mul", "func Shout")
	titles := testfixture.PDFOutline(t, pdf)
	if len(titles) != 3 || !strings.Contains(titles[0], "add.go") || !strings.Contains(titles[1], "mul.go") ||
		!strings.Contains(titles[2], "strs.go") {
		t.Errorf("outline %q, want one bookmark per file (add.go, mul.go, strs.go)", titles)
	}
	// The entry print of the same file shows every pane at once.
	entry := convertOK(t, sharedManager(t), siteJobFor(t, gc.Dir, gc.Entry, "", ""))
	testfixture.WantText(t, testfixture.PDFText(t, entry), "func Add", "func Mul", "func Shout")
}

// A page's fetch and XHR of the site's own files work (a missing one is a
// 404, as from a web server), as do ES modules (served with their type,
// which nosniff makes them need): the page draws what they hold.
func TestSiteFetchesItsData(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<!DOCTYPE html><title>Data</title><div id="out">waiting</div><div id="xhr"></div>
<script>
fetch("data/x.json").then(r => r.json()).then(d => {
  setTimeout(() => { document.getElementById("out").textContent = "fetched " + d.answer; }, 300);
});
const x = new XMLHttpRequest();
x.open("GET", "data/y.txt");
x.onload = () => { document.getElementById("xhr").textContent = "xhr " + x.responseText; };
x.send();
fetch("data/missing.json").then(r => { document.getElementById("gone").textContent = "missing answered " + r.status; });
</script><div id="gone"></div><div id="mod"></div>
<script type="module">import { word } from "./lib/word.mjs"; document.getElementById("mod").textContent = "module says " + word;</script>`,
		"data/x.json":  `{"answer": "forty-two"}`,
		"data/y.txt":   `seventeen`,
		"lib/word.mjs": `export const word = "hello";`,
	})
	text := testfixture.PDFText(t, convertOK(t, sharedManager(t), siteJobFor(t, dir, "index.html", "", "")))
	testfixture.WantText(t, text, "fetched forty-two", "xhr seventeen", "missing answered 404", "module says hello")
	if strings.Contains(text, "waiting") {
		t.Errorf("printed before the data was drawn:\n%s", text)
	}
}

// A site's page cannot reach anything outside its files: a loopback
// server it fetches, images and navigates to is never hit.
func TestSiteCannotReachOutside(t *testing.T) {
	testfixture.NeedChromium(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("leaked"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	outside := "http://127.0.0.1:" + port
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<!DOCTYPE html><title>Out</title><div id="out">trying</div>
<img src="` + outside + `/img.png"><link rel="stylesheet" href="` + outside + `/s.css">
<iframe src="` + outside + `/frame"></iframe>
<script>
fetch("` + outside + `/data").then(r => r.text()).then(t => { out.textContent = "reached " + t; },
  () => { out.textContent = "outside blocked"; });
</script>`,
	})
	text := testfixture.PDFText(t, convertOK(t, sharedManager(t), siteJobFor(t, dir, "index.html", "", "")))
	testfixture.WantText(t, text, "outside blocked")
	if n := hits.Load(); n != 0 {
		t.Errorf("the outside server was hit %d times", n)
	}
}
