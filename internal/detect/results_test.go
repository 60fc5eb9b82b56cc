package detect_test

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sitegen"
)

// TestResultsOfRealGenerators: per-test results and per-file coverage of
// sites made by the real tools agree with the figures the tools gave.
func TestResultsOfRealGenerators(t *testing.T) {
	for _, tc := range []struct {
		name  string
		site  func(testing.TB) sitegen.Site
		tests bool // else files
	}{
		{"playwright", sitegen.Playwright, true},
		{"allure", sitegen.Allure, true},
		{"mochawesome", sitegen.Mochawesome, true},
		{"coverage.py", sitegen.CoveragePy, false},
		{"c8", sitegen.C8, false},
		{"go-cover", sitegen.GoCover, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.site(t)
			g, sum := detect.Site(s.Files, s.Open)
			res := detect.Results(g, s.Files, s.Open)
			// The same site read as an fs.FS (what the service hands
			// detect: a site.View's FS) gives the same answers.
			if g2, sum2, res2 := detect.SiteFS(os.DirFS(s.Dir)); g2 != g || !reflect.DeepEqual(sum2, sum) || !reflect.DeepEqual(res2, res) {
				t.Errorf("%s: SiteFS gives %q %+v %+v, Site and Results %q %+v %+v", tc.name, g2, sum2, res2, g, sum, res)
			}
			if res == nil {
				t.Fatalf("%s (%s): no results", tc.name, g)
			}
			if !tc.tests {
				if len(res.Files) < 2 {
					t.Fatalf("%s: files %+v", tc.name, res.Files)
				}
				checkFiles(t, res, sum)
				return
			}
			n := map[string]int64{}
			ids := map[string]bool{}
			for _, tr := range res.Tests {
				n[tr.Status]++
				if tr.Flaky {
					n["flaky"]++
				}
				if tr.ID == "" || tr.Title == "" || ids[tr.ID] {
					t.Fatalf("%s: test without a unique id or title: %+v", tc.name, tr)
				}
				ids[tr.ID] = true
			}
			if n[report.TestPassed] != *s.Want.Passed || n[report.TestFailed] != *s.Want.Failed {
				t.Fatalf("%s: per-test counts %v, the tool said %s; tests %+v", tc.name, n, fmt.Sprintf("%+v", s.Want), res.Tests)
			}
			if s.Want.Skipped != nil && n[report.TestSkipped] != *s.Want.Skipped {
				t.Fatalf("%s: skipped %d, want %d", tc.name, n[report.TestSkipped], *s.Want.Skipped)
			}
			if tc.name == "playwright" && s.Want.Flaky != nil && n["flaky"] != *s.Want.Flaky {
				t.Fatalf("%s: flaky %d, want %d", tc.name, n["flaky"], *s.Want.Flaky)
			}
			if res.DurationMs() <= 0 && tc.name != "mochawesome" {
				t.Fatalf("%s: no durations: %+v", tc.name, res.Tests)
			}
		})
	}
}

// checkFiles: every file's coverage is a percentage, and the site's
// total lies between the lowest and the highest file's.
func checkFiles(t *testing.T, res *report.Results, sum *report.Summary) {
	t.Helper()
	lo, hi := 100.0, 0.0
	for _, f := range res.Files {
		if f.Path == "" || f.Lines < 0 || f.Lines > 100 {
			t.Fatalf("file %+v", f)
		}
		lo, hi = min(lo, f.Lines), max(hi, f.Lines)
	}
	if sum == nil || sum.Lines == nil || *sum.Lines < lo-0.01 || *sum.Lines > hi+0.01 || lo == hi {
		t.Fatalf("total %s outside the files' range %v–%v: %+v", fmt.Sprintf("%+v", sum), lo, hi, res.Files)
	}
}

// TestResultsOfJUnitXML: a JUnit XML file inside a site gives its tests,
// nested suites included, whatever generator the site's pages are.
func TestResultsOfJUnitXML(t *testing.T) {
	type tc struct {
		XMLName   xml.Name  `xml:"testcase"`
		Classname string    `xml:"classname,attr"`
		Name      string    `xml:"name,attr"`
		Time      string    `xml:"time,attr"`
		Failure   *struct{} `xml:"failure"`
		Skipped   *struct{} `xml:"skipped"`
	}
	type suite struct {
		XMLName xml.Name `xml:"testsuite"`
		Name    string   `xml:"name,attr"`
		Cases   []tc
	}
	doc := struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []suite
	}{Suites: []suite{{Name: "pkg", Cases: []tc{
		{Classname: "pkg.A", Name: "ok", Time: "0.250"},
		{Classname: "pkg.A", Name: "broken", Time: "1.5", Failure: &struct{}{}},
		{Name: "later", Skipped: &struct{}{}},
	}}}}
	b, err := xml.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><p>results"), 0o644)
	os.MkdirAll(filepath.Join(dir, "junit"), 0o755)
	os.WriteFile(filepath.Join(dir, "junit", "report.xml"), append([]byte(xml.Header), b...), 0o644)
	s := sitegen.Site{Dir: dir, Files: []string{"index.html", "junit/report.xml"}}
	res := detect.Results("", s.Files, s.Open)
	if res == nil || len(res.Tests) != 3 {
		t.Fatalf("junit: %+v", res)
	}
	got := fmt.Sprint(res.Tests)
	for _, want := range []string{"{pkg.A.ok ok passed 250 false}", "{pkg.A.broken broken failed 1500 false}", "{pkg.later later skipped 0 false}"} {
		if !strings.Contains(got, want) {
			t.Fatalf("junit tests %s, want %s", got, want)
		}
	}
}

// TestResultsCapped: a listing above the cap keeps report.MaxTests tests
// and says it was truncated.
func TestResultsCapped(t *testing.T) {
	var r report.Results
	for i := 0; i < report.MaxTests+5; i++ {
		r.AddTest(report.TestResult{ID: fmt.Sprint(i), Title: strings.Repeat("x", 2*report.MaxTestField), Status: report.TestPassed})
	}
	if len(r.Tests) != report.MaxTests || !r.Truncated || len(r.Tests[0].Title) != report.MaxTestField {
		t.Fatalf("%d tests, truncated %v, title %d bytes", len(r.Tests), r.Truncated, len(r.Tests[0].Title))
	}
}
