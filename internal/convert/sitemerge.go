package convert

import (
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/reportd/reportd/internal/report"
)

// maxBookmarkTitle bounds a bookmark's title, in runes.
const maxBookmarkTitle = 200

// mergePDFs writes the parts, in order, to out as one PDF whose outline has
// one bookmark per part, titled by the part, pointing at its first page.
// It runs in the merge child (sitemerge_proc.go).
func mergePDFs(parts []sitePart, out string) error {
	pdfcpuOnce.Do(api.DisableConfigDir)
	if len(parts) == 0 {
		return report.Errorf(report.Conversion, "the site has no page to print")
	}
	bms := make([]pdfcpu.Bookmark, 0, len(parts))
	files := make([]string, 0, len(parts))
	page := 1
	for _, p := range parts {
		n, err := api.PageCountFile(p.File)
		if err != nil {
			return report.Wrap(report.Conversion, err, fmt.Sprintf("the printed page %q cannot be read", p.Title))
		}
		if n == 0 {
			continue
		}
		bms = append(bms, pdfcpu.Bookmark{Title: shortTitle(p.Title), PageFrom: page})
		files = append(files, p.File)
		page += n
	}
	merged := out + ".merged"
	defer os.Remove(merged)
	conf := model.NewDefaultConfiguration()
	conf.CreateBookmarks = false // one per part, titled by the page, below
	conf.ValidationMode = model.ValidationRelaxed
	if err := api.MergeCreateFile(files, merged, false, conf); err != nil {
		return report.Wrap(report.Conversion, err, "the site's pages cannot be merged into one PDF")
	}
	conf = model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	if err := api.AddBookmarksFile(merged, out, bms, true, conf); err != nil {
		return report.Wrap(report.Conversion, err, "the merged PDF cannot get its outline")
	}
	return nil
}

func shortTitle(s string) string {
	if utf8.RuneCountInString(s) <= maxBookmarkTitle {
		return s
	}
	r := []rune(s)
	return string(r[:maxBookmarkTitle-1]) + "…"
}
