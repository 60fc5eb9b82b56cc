package detect

import (
	"io"
	"path"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Results reads a report's per-test results and per-file coverage, where
// its generator lists them (docs/generators.md, "Per-test results"):
//
//	playwright   report.json of the embedded report: every test's id,
//	             title path, outcome and duration
//	allure       data/test-results/*.json (Allure 3) or data/test-cases/*.json
//	             (Allure 2): uid or historyId, fullName, status, time
//	mochawesome  the JSON in data-raw (or a mochawesome.json beside it):
//	             every test's uuid, fullTitle, state, duration
//	JUnit XML    any *.xml of a site that is a <testsuites>/<testsuite>
//	coverage.py  index.html's file rows (or a coverage.json beside it)
//	istanbul/c8  coverage-summary.json or coverage-final.json in the site
//	go-cover     the coverage profile beside the page
//
// generator is what Site (or Detect) answered. Every read is bounded like
// Site's; at most report.MaxTests tests and report.MaxFiles files are kept
// (Truncated says more were listed). nil when nothing was found.
func Results(generator string, files []string, open Opener) *report.Results {
	r := &report.Results{}
	switch generator {
	case Playwright:
		for _, page := range sitePages(files) {
			if playwrightResults(page, open, r) {
				break
			}
		}
	case Mochawesome:
		mochawesomeSiteResults(files, open, r)
	case Allure:
		allureResults(files, open, r)
	case GoCover:
		goCoverResults(files, open, r)
	case CoveragePy:
		coveragePyResults(files, open, r)
	case Istanbul:
		istanbulResults(files, open, r)
	}
	if len(r.Tests) == 0 {
		junitResults(files, open, r)
	}
	if r.Empty() {
		return nil
	}
	return r
}

// junitFiles bounds how many XML files of a site are tried as JUnit.
const junitFiles = 32

// resultsJSONLimit bounds one JSON or XML file read for results.
const resultsJSONLimit = 32 << 20

func openLimited(open Opener, name string, n int64) (io.ReadCloser, bool) {
	rc, err := open(name)
	if err != nil {
		return nil, false
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, n), rc}, true
}

func hasExt(name, ext string) bool { return strings.EqualFold(path.Ext(name), ext) }
