package detect

import (
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// JUnit XML (Ant's schema, as surefire, pytest --junitxml, jest-junit,
// go-junit-report and Playwright's junit reporter write it):
//
//	<testsuites><testsuite name="…"><testcase classname="…" name="…" time="0.012">
//	  <failure …/> | <error …/> | <skipped/>
//	</testcase></testsuite></testsuites>
//
// A test's id is classname + "." + name (the suite name where there is
// no classname), its status failed with a failure or error, skipped with
// skipped, passed otherwise; time is in seconds.
type junitCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *struct{} `xml:"failure"`
	Error     *struct{} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
}

type junitSuite struct {
	Name   string       `xml:"name,attr"`
	Cases  []junitCase  `xml:"testcase"`
	Suites []junitSuite `xml:"testsuite"`
}

func junitResults(files []string, open Opener, r *report.Results) {
	tried := 0
	for _, f := range files {
		if !hasExt(f, ".xml") || tried == junitFiles {
			continue
		}
		tried++
		rc, ok := openLimited(open, f, resultsJSONLimit)
		if !ok {
			continue
		}
		var root struct {
			XMLName xml.Name
			junitSuite
		}
		err := xml.NewDecoder(rc).Decode(&root)
		rc.Close()
		if err != nil || (root.XMLName.Local != "testsuites" && root.XMLName.Local != "testsuite") {
			continue
		}
		addJUnitSuite(&root.junitSuite, r)
	}
}

func addJUnitSuite(s *junitSuite, r *report.Results) {
	for _, c := range s.Cases {
		cls := c.Classname
		if cls == "" {
			cls = s.Name
		}
		id := c.Name
		if cls != "" {
			id = cls + "." + c.Name
		}
		st := report.TestPassed
		switch {
		case c.Failure != nil || c.Error != nil:
			st = report.TestFailed
		case c.Skipped != nil:
			st = report.TestSkipped
		}
		r.AddTest(report.TestResult{ID: id, Title: strings.TrimSpace(c.Name), Status: st, DurationMs: secondsMs(c.Time)})
	}
	for i := range s.Suites {
		addJUnitSuite(&s.Suites[i], r)
	}
}

// secondsMs reads a duration in seconds ("0.012", "1,234.5") as milliseconds.
func secondsMs(s string) int64 {
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0
	}
	return int64(f*1000 + 0.5)
}
