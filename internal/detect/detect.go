// Package detect recognises, from an HTML report's text, the tool that
// generated it and reads the report's headline figures (line coverage,
// test counts) for badges and the report JSON. It looks only at fixed
// markup of each generator's own template, never runs anything, and
// answers nothing rather than a guess when the markup is not what it knows.
//
// Known generators (see each file for the markup it reads):
//
//	coverage.py   index.html header:    <span class="pc_cov">87%</span>
//	istanbul      (nyc, c8, jest) index.html header: <span class="strong">87.5% </span> <span class="quiet">Lines</span>
//	jacoco        index.html: the Total row under the Missed/Lines columns
//	mochawesome   inline HTML: the stats of the JSON in <body data-raw="…">
//	pytest-html   summary: <span class="passed">3 Passed,</span> and friends
//	playwright    index.html: report.json's stats in the base64 zip at its end
//	go-cover      `go tool cover -html`: the total over the embedded sources, their
//	              statements counted as cmd/cover does (checked against the file
//	              chooser's "name (75.0%)" options); Site prefers a profile beside it
//	allure        sites only (Site): Allure 3's summary.json, Allure 2's widgets/summary.json
//
// Detect and File look at one file; Site looks at a whole report site.
package detect

import (
	"io"
	"os"

	"github.com/reportd/reportd/internal/report"
)

// Limit is how much of a file File (and Site, per page) reads: every
// generator above puts its figures near the top (mochawesome's after its
// inline styles), except Playwright, whose report follows half a
// megabyte of its app (Site reads on, up to PlaywrightLimit).
const Limit = 4 << 20

// Generator names, as they appear in the report JSON's "generator".
const (
	CoveragePy  = "coverage.py"
	Istanbul    = "istanbul"
	JaCoCo      = "jacoco"
	Mochawesome = "mochawesome"
	PytestHTML  = "pytest-html"
	Playwright  = "playwright"
	GoCover     = "go-cover"
	Allure      = "allure"
)

type detector struct {
	name  string
	is    func(text string) bool
	parse func(text string) *report.Summary
}

// The order matters only for files that would match two (none known).
var detectors = []detector{
	{CoveragePy, isCoveragePy, coveragePy},
	{Istanbul, isIstanbul, istanbul},
	{JaCoCo, isJaCoCo, jacoco},
	{Mochawesome, isMochawesome, mochawesome},
	{PytestHTML, isPytestHTML, pytestHTML},
	{Playwright, isPlaywright, playwright},
	{GoCover, isGoCover, goCover},
}

// Detect names the generator of an HTML report's text and reads its
// summary; ("", nil) when the generator is not recognised. A recognised
// report whose figures cannot be read gives the generator and nil.
func Detect(text []byte) (generator string, s *report.Summary) {
	return detectText(string(text))
}

// detectText is Detect of text held as a string already.
func detectText(t string) (generator string, s *report.Summary) {
	for _, d := range detectors {
		if d.is(t) {
			s := d.parse(t)
			if s.Empty() {
				s = nil
			}
			return d.name, s
		}
	}
	return "", nil
}

// File runs Detect on the first Limit bytes of the file at path.
func File(path string) (string, *report.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, Limit))
	if err != nil {
		return "", nil, err
	}
	g, s := Detect(b)
	return g, s, nil
}
