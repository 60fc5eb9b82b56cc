package service

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// ContentEntry is the one rule for the file a report opens on in the
// content origin: a single html report's SiteManifest names its one file
// exactly so, a name that is no valid site name ("C:page.html", a C1
// control character) as index.html, and the file opens by that name.
func TestContentEntryMatchesManifest(t *testing.T) {
	ctx := context.Background()
	s, _ := newLocal(t, t.TempDir(), Config{})
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, entry string }{
		{"page.html", "page.html"},
		{"C:page.html", "index.html"},
		{"odd\u0085name.html", "index.html"},
	} {
		rep, err := s.UploadReport(ctx, report.ReportUpload{ProjectID: p.ID, FileType: report.HTML,
			File: report.Upload{FileName: c.name, Body: strings.NewReader("<p>" + c.name + "</p>")}})
		if err != nil {
			t.Fatalf("%q: %v", c.name, err)
		}
		entry, ok := ContentEntry(&rep)
		m, err := s.SiteManifest(ctx, rep.ID)
		if err != nil || !ok || entry != c.entry || m.Entry != entry || len(m.Files) != 1 || m.Files[0].Path != entry {
			t.Fatalf("%q: ContentEntry %q %v, manifest %+v %v, want %q", c.name, entry, ok, m, err, c.entry)
		}
		f, ok := m.Lookup(entry)
		if !ok {
			t.Fatalf("%q: the manifest has no %q", c.name, entry)
		}
		o, err := s.OpenSiteFile(ctx, rep.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(o)
		o.Close()
		if string(b) != "<p>"+c.name+"</p>" {
			t.Errorf("%q: served %q", c.name, b)
		}
	}
	for _, r := range []report.Report{{FileName: "a.pdf", FileType: report.PDF}, {FileName: "a.md", FileType: report.MD}} {
		if f, ok := ContentEntry(&r); ok {
			t.Errorf("%s is served on the content origin as %q", r.FileName, f)
		}
	}
	site := report.Report{FileName: "htmlcov.zip", FileType: report.HTML, Kind: report.KindSite, Entry: "htmlcov/index.html"}
	if f, ok := ContentEntry(&site); !ok || f != "htmlcov/index.html" {
		t.Errorf("a site opens on %q %v", f, ok)
	}
}
