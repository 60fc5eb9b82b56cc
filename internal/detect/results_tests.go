package detect

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// playwrightResults reads the tests of report.json in a page's embedded
// report: files[].tests[] with testId (a hash of file, title path and
// project: stable across builds), projectName, path, title, outcome
// (expected, unexpected, flaky, skipped) and duration (ms).
func playwrightResults(page string, open Opener, r *report.Results) bool {
	rc, err := open(page)
	if err != nil {
		return false
	}
	defer rc.Close()
	data, err := skipToPlaywrightData(io.LimitReader(rc, PlaywrightLimit+Limit))
	if err != nil {
		return false
	}
	var zb bytes.Buffer
	if _, err := io.Copy(&zb, base64.NewDecoder(base64.StdEncoding, io.LimitReader(&base64Run{r: data}, PlaywrightLimit))); err != nil {
		return false
	}
	zr, err := zip.NewReader(bytes.NewReader(zb.Bytes()), int64(zb.Len()))
	if err != nil {
		return false
	}
	for _, f := range zr.File {
		if f.Name != "report.json" {
			continue
		}
		frc, err := f.Open()
		if err != nil {
			return false
		}
		defer frc.Close()
		var files []struct {
			FileName string
			Tests    []struct {
				TestID      string `json:"testId"`
				Title       string
				Path        []string
				ProjectName string
				Outcome     string
				Duration    float64
			}
		}
		if err := jsonField(io.LimitReader(frc, pwReportJSONSize), "files", &files); err != nil {
			return false
		}
		for _, file := range files {
			for _, t := range file.Tests {
				parts := append([]string{}, t.ProjectName, file.FileName)
				parts = append(parts, t.Path...)
				parts = append(parts, t.Title)
				title := joinNonEmpty(parts, " › ")
				id := t.TestID
				if id == "" {
					id = title
				}
				res := report.TestResult{ID: id, Title: title, DurationMs: int64(t.Duration)}
				switch t.Outcome {
				case "expected":
					res.Status = report.TestPassed
				case "flaky":
					res.Status, res.Flaky = report.TestPassed, true
				case "unexpected":
					res.Status = report.TestFailed
				default:
					res.Status = report.TestSkipped
				}
				r.AddTest(res)
			}
		}
		return true
	}
	return false
}

func joinNonEmpty(parts []string, sep string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// mochawesome's JSON: results[] of suites, each with tests[] (title,
// fullTitle, state passed/failed/pending, pending, skipped, duration in
// ms) and nested suites[]. The uuid changes every run, so a test's id is
// its file and fullTitle.
type mochaSuite struct {
	File   string
	Tests  []mochaTest
	Suites []mochaSuite
}

type mochaTest struct {
	Title, FullTitle, State string
	Duration                float64
	Pending, Skipped        bool
}

func mochawesomeSiteResults(files []string, open Opener, r *report.Results) {
	// A mochawesome.json beside the page has the same data, unescaped.
	for _, f := range files {
		if hasExt(f, ".json") && strings.HasPrefix(path.Base(f), "mochawesome") {
			if rc, ok := openLimited(open, f, resultsJSONLimit); ok {
				done := mochawesomeJSON(rc, r)
				rc.Close()
				if done {
					return
				}
			}
		}
	}
	for _, page := range sitePages(files) {
		rc, ok := openLimited(open, page, resultsJSONLimit)
		if !ok {
			continue
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		t := string(b)
		if !isMochawesome(t) {
			continue
		}
		raw := t[strings.Index(t, dataRaw)+len(dataRaw):]
		if end := strings.IndexByte(raw, '"'); end >= 0 {
			raw = raw[:end]
		}
		if mochawesomeJSON(strings.NewReader(html.UnescapeString(raw)), r) {
			return
		}
	}
}

func mochawesomeJSON(rd io.Reader, r *report.Results) bool {
	var v struct {
		Results []mochaSuite
	}
	if err := json.NewDecoder(rd).Decode(&v); err != nil || v.Results == nil {
		return false
	}
	var walk func(s *mochaSuite, file string)
	walk = func(s *mochaSuite, file string) {
		if s.File != "" {
			file = s.File
		}
		for _, t := range s.Tests {
			st := report.TestPassed
			switch {
			case t.State == "failed":
				st = report.TestFailed
			case t.Pending || t.Skipped || t.State == "pending" || t.State == "skipped":
				st = report.TestSkipped
			}
			title := t.FullTitle
			if title == "" {
				title = t.Title
			}
			r.AddTest(report.TestResult{ID: joinNonEmpty([]string{file, title}, " › "), Title: title, Status: st, DurationMs: int64(t.Duration)})
		}
		for i := range s.Suites {
			walk(&s.Suites[i], file)
		}
	}
	for i := range v.Results {
		walk(&v.Results[i], "")
	}
	return true
}

// allureResults reads Allure 3's data/test-results/*.json or Allure 2's
// data/test-cases/*.json: historyId (stable across runs; else id/uid),
// fullName, name, status (passed, failed, broken, skipped, unknown),
// duration (Allure 3) or time.duration (Allure 2), flaky; the earlier
// attempts of a retried test (isRetry) are left out.
func allureResults(files []string, open Opener, r *report.Results) {
	var picked []string
	for _, dir := range []string{"data/test-results/", "data/test-cases/"} {
		for _, f := range files {
			if hasExt(f, ".json") && strings.Contains("/"+f, "/"+dir) && !strings.Contains(strings.TrimPrefix(f[strings.Index(f, dir)+len(dir):], "/"), "/") {
				picked = append(picked, f)
			}
		}
		if len(picked) > 0 {
			break
		}
	}
	sort.Strings(picked)
	for _, f := range picked {
		if len(r.Tests) >= report.MaxTests {
			r.Truncated = true
			return
		}
		rc, ok := openLimited(open, f, allureJSONLimit)
		if !ok {
			continue
		}
		var v struct {
			ID, UID, HistoryID, Name, FullName, Status string
			Duration                                   *float64
			Time                                       struct{ Duration float64 }
			Flaky, Hidden                              bool
			IsRetry                                    bool `json:"isRetry"`
		}
		err := json.NewDecoder(rc).Decode(&v)
		rc.Close()
		if err != nil || v.Status == "" || v.Hidden || v.IsRetry { // a retry's final run is listed too
			continue
		}
		id := firstNonEmpty(v.HistoryID, v.FullName, v.ID, v.UID)
		st := report.TestSkipped
		switch v.Status {
		case "passed":
			st = report.TestPassed
		case "failed", "broken":
			st = report.TestFailed
		}
		d := v.Time.Duration
		if v.Duration != nil {
			d = *v.Duration
		}
		r.AddTest(report.TestResult{ID: id, Title: firstNonEmpty(v.FullName, v.Name), Status: st, DurationMs: int64(d), Flaky: v.Flaky})
	}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
