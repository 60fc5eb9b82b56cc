package convert

import (
	"io"
	"os"
	"path"
	"strings"

	"github.com/reportd/reportd/internal/convert/chromium"
	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// SiteFiles opens one file of a site (chromium.SiteFiles).
type SiteFiles = chromium.SiteFiles

// Site is the source of an HTML report printed as a site: its entry page
// and every file it loads come from Files, answered through the browser's
// request interception under an origin of the job's own
// (https://r<random>.reportd.invalid/). The engine itself has no network;
// the page's fetch and XHR of its own files (data/*.json) still work.
type Site struct {
	Entry     string    // the entry page, relative to the site root
	Files     SiteFiles //
	Generator string    // the report's generator (report.Report.Generator); picks a ready selector (chromium/site_ready.go)
}

// sitePart is one printed page or part of a site job (chromium.SitePart).
type sitePart = chromium.SitePart

// cleanSitePath checks an entry path: relative, slash-separated, clean.
func cleanSitePath(p string) (string, error) {
	c := path.Clean(strings.TrimPrefix(p, "/"))
	if p == "" || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsAny(p, "\\\x00") {
		return "", report.Errorf(report.Internal, "convert: site entry %q is not a relative path", p)
	}
	return c, nil
}

// printSite prints job (Job.Site set) into out: the entry page alone, or
// with scope=site every in-site page and part, merged with an outline.
// The entry alone holds one slot of the Chromium gate; a walk (scope=site)
// takes a turn for each page (chromium.printSite), and only one walk of a
// report runs at a time: another variant of it is refused meanwhile.
func (m *Manager) printSite(job Job, out *os.File) error {
	entry, err := cleanSitePath(job.Site.Entry)
	if err != nil {
		return err
	}
	all := job.Print.Scope == report.ScopeSite
	if all {
		if err := m.chrome.Usable(); err != nil {
			return err
		}
		done, err := m.walking(job.ReportID)
		if err != nil {
			return err
		}
		defer done()
	} else {
		leave, err := m.chrome.Enter(m.ctx, job.ProjectID)
		if err != nil {
			return err
		}
		defer leave()
	}
	dir, err := os.MkdirTemp(m.cache.tmpDir(), "site-*")
	if err != nil {
		return engine.DiskErr(err, "cannot write the PDF cache")
	}
	defer os.RemoveAll(dir)
	o := chromium.SiteOpts(m.cfg.Paper)
	o.Apply(job.Print, m.waitMax())
	sj := chromium.SiteJob{Entry: entry, Files: job.Site.Files, Generator: job.Site.Generator,
		All: all, MaxPages: m.cfg.SiteMaxPages, Dir: dir, Project: job.ProjectID}
	parts, err := m.chrome.PrintSite(m.ctx, sj, o)
	if err != nil {
		return err
	}
	if !all {
		f, err := os.Open(parts[0].File)
		if err != nil {
			return report.Wrap(report.Storage, err, "cannot read the printed page")
		}
		defer f.Close()
		if _, err := io.Copy(out, f); err != nil {
			return engine.DiskErr(err, "cannot write the PDF cache")
		}
		return nil
	}
	if err := m.mergeParts(parts, out.Name()); err != nil {
		return err
	}
	m.log.Debug("site printed", "report", job.ReportID, "parts", len(parts))
	return nil
}

// walking marks a walk of report id running until done is called; while
// one runs, another (another print variant: the same one shares the first
// through the Manager's singleflight) is refused with Unavailable.
func (m *Manager) walking(id int64) (done func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.walks[id] {
		return nil, report.Errorf(report.Unavailable,
			"a site PDF (scope=site) of report %d is being printed already: one walk of a report runs at a time; try again when it is done", id)
	}
	if m.walks == nil {
		m.walks = map[int64]bool{}
	}
	m.walks[id] = true
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.walks, id)
	}, nil
}
