package detect

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Opener opens one file of a site by its path in the site (a manifest
// path: slash-separated, relative to the site root).
type Opener func(name string) (io.ReadCloser, error)

// SitePages bounds how many HTML pages of a site Site looks at.
const SitePages = 8

// siteProfiles bounds how many files Site tries as Go coverage profiles.
const siteProfiles = 8

// Site names the generator of a whole report site and reads its headline
// figures, given the site's file paths and a way to open them. It looks
// at the entry pages a generator writes (index.html, mochawesome.html,
// report.html, shallowest first, then the other pages, at most
// SitePages) and, where the figures live in data files, at those:
// Allure's summary.json, a Go coverage profile beside a
// `go tool cover -html` page. Every read is bounded (Limit per page,
// PlaywrightLimit for a Playwright page's embedded report, small caps for
// JSON and profiles) and nothing is run. Summary.Flaky is the number of
// flaky tests where the report tells it (Playwright, Allure 3):
// Playwright's flaky tests are also counted in Passed, Allure's by their
// final status (Passed or Failed). ("", nil) when no
// generator is recognised; a file that cannot be opened or read counts
// as not there.
func Site(files []string, open Opener) (generator string, s *report.Summary) {
	has := make(map[string]bool, len(files))
	for _, f := range files {
		has[f] = true
	}
	for _, page := range sitePages(files) {
		t, ok := readHead(open, page, Limit)
		if !ok {
			continue
		}
		switch {
		case isAllureApp(t):
			if s, ok := allureSite(files, has, open); ok {
				return Allure, nonEmpty(s)
			}
		case strings.Contains(t, pwMarker):
			// Playwright's app names its report data; a page whose data
			// cannot be read (damaged, or past PlaywrightLimit) is still
			// Playwright's, without figures.
			s, _ := playwrightPage(t, page, open)
			return Playwright, nonEmpty(s)
		case isGoCover(t):
			return GoCover, nonEmpty(goCoverSite(t, files, open))
		}
		if g, s := detectText(t); g != "" {
			return g, s
		}
	}
	return "", nil
}

// entryNames are the names generators give their entry page; a page of
// another name may be one file's page (coverage.py, istanbul and JaCoCo
// write one per source file, with that file's figures).
var entryNames = []string{"index.html", "mochawesome.html", "report.html"}

// sitePages are the pages Site reads, in order: entry pages by name,
// shallowest first (a coverage/ folder holds lcov-report/index.html),
// then the other pages, shallowest first, then by name.
func sitePages(files []string) []string {
	var pages []string
	for _, f := range files {
		if isHTMLName(f) {
			pages = append(pages, f)
		}
	}
	rank := func(f string) int {
		if i := slices.Index(entryNames, path.Base(f)); i >= 0 {
			return i
		}
		return len(entryNames)
	}
	slices.SortFunc(pages, func(a, b string) int {
		ra, rb := rank(a), rank(b)
		if (ra < len(entryNames)) != (rb < len(entryNames)) {
			return ra - rb
		}
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	if len(pages) > SitePages {
		pages = pages[:SitePages]
	}
	return pages
}

func isHTMLName(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".html" || ext == ".htm"
}

// readHead reads at most n bytes of a site file.
func readHead(open Opener, name string, n int64) (string, bool) {
	rc, err := open(name)
	if err != nil {
		return "", false
	}
	defer rc.Close()
	// A page of a large site's index is megabytes: read it into one
	// buffer of its size (where the opener tells it) rather than one
	// doubled and copied a dozen times.
	var b strings.Builder
	if st, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Size() > 0 {
			b.Grow(int(min(fi.Size(), n)) + 1)
		}
	}
	if _, err := io.Copy(&b, io.LimitReader(rc, n)); err != nil {
		return "", false
	}
	return b.String(), true
}

func nonEmpty(s *report.Summary) *report.Summary {
	if s.Empty() {
		return nil
	}
	return s
}

func allureSite(files []string, has map[string]bool, open Opener) (*report.Summary, bool) {
	v3, v2 := allureSummaryFiles(has, files)
	for _, f := range v3 {
		rc, err := open(f)
		if err != nil {
			continue
		}
		s, ok := allure3Summary(rc)
		rc.Close()
		if ok {
			return s, true
		}
	}
	if v2 != "" {
		if rc, err := open(v2); err == nil {
			s, ok := allure2Summary(rc)
			rc.Close()
			if ok {
				return s, true
			}
		}
	}
	return nil, false
}

// playwrightPage reads a page that names Playwright's report: from the
// text already read when the report is in it, else streaming the whole
// page (the report follows the app's half megabyte of script).
func playwrightPage(head, page string, open Opener) (*report.Summary, bool) {
	if pwDataIndex(head) >= 0 && len(head) < Limit {
		s, err := playwrightStats(strings.NewReader(head))
		return s, err == nil
	}
	rc, err := open(page)
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	s, err := playwrightStats(io.LimitReader(rc, PlaywrightLimit+Limit))
	return s, err == nil
}

// goCoverSite reads a `go tool cover -html` page of a site: the total from
// a coverage profile in the site that covers every file of the page, else
// what the page itself carries (goCover).
func goCoverSite(page string, files []string, open Opener) *report.Summary {
	names, _ := goCoverFiles(page)
	tried := 0
	for _, f := range files {
		if !isProfileName(f) || tried == siteProfiles {
			continue
		}
		tried++
		rc, err := open(f)
		if err != nil {
			continue
		}
		total, covered := profileTotal(rc)
		rc.Close()
		if total == nil || len(names) == 0 {
			continue
		}
		all := true
		for _, n := range names {
			all = all && covered[n]
		}
		if all {
			return &report.Summary{Lines: total}
		}
	}
	return goCover(page)
}

// isProfileName tells whether a site file may be a Go coverage profile,
// by the names CI scripts give them (coverage.out, cover.out, c.out,
// coverage.txt, profile.cov, unit.coverprofile, …).
func isProfileName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".out", ".cov", ".coverprofile", ".txt", ".profile", ".prof":
		return true
	}
	return false
}
