package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// The site lines of upload's output: what the terminal shows and the last
// column of the piped line. (The end-to-end script covers the rest; the
// daemon it runs has no content origin, so no siteUrl.)
func TestUploadResultsShowTheSite(t *testing.T) {
	site := &report.Report{ID: 7, ProjectID: 2, Name: "htmlcov", FileName: "htmlcov.zip", FileType: report.HTML,
		Kind: report.KindSite, Entry: "index.html", Files: 41, Bytes: 3 << 20,
		DashboardURL: "http://d/#/reports/7", SiteURL: "http://7.localhost:8081/index.html?sig=x"}
	results := []uploadResult{{Report: site, LocalPath: "htmlcov", DownloadURL: "http://d/api/reports/7/download", PDFURL: "http://d/api/reports/7/pdf"}}
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		o := &uploadOptions{f: NewFactory(&IOStreams{Out: &out, ErrOut: &out, OutTTY: tty})}
		if err := printUploadResults(o, results); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if tty {
			for _, want := range []string{
				`htmlcov → report 7 "htmlcov" (project 2, site of 41 files, 3.0 MiB)`,
				"\n  site:     http://7.localhost:8081/index.html?sig=x\n",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("terminal output lacks %q:\n%s", want, got)
				}
			}
		} else if !strings.HasSuffix(got, "\thttp://7.localhost:8081/index.html?sig=x\n") {
			t.Errorf("piped output does not end with the site URL: %q", got)
		}
	}
}
