package convert

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

var pdfcpuOnce sync.Once

// trimPDF writes to out the pages of the stored PDF at src that ranges
// (normalized report.PrintOptions.PageRanges) select, with pdfcpu. As with
// Chromium, a range running past the last page is cut there, and ranges
// selecting no page are a Validation error. pdfcpu runs in the daemon, not
// in the engine sandbox: it is pure Go and recovers its own panics, and the
// stored PDF already passed the upload's checks.
func trimPDF(src, ranges, out string) error {
	pdfcpuOnce.Do(api.DisableConfigDir) // no config directory under $HOME
	f, err := openPDF(src)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := api.PageCount(f, nil)
	if err != nil {
		return report.Wrap(report.Conversion, err, "the PDF cannot be read to select pages")
	}
	first, _ := strconv.Atoi(strings.FieldsFunc(ranges, func(r rune) bool { return r == ',' || r == '-' })[0])
	if first > n {
		return report.Errorf(report.Validation, "pageRanges %q asks for pages beyond the end of the document (%d pages)", ranges, n)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return report.Wrap(report.Storage, err, "cannot read the report file")
	}
	w, err := os.Create(out)
	if err != nil {
		return engine.DiskErr(err, "cannot write the PDF cache")
	}
	err = api.Trim(f, w, strings.Split(ranges, ","), nil)
	if cerr := w.Close(); err == nil && cerr != nil {
		return engine.DiskErr(cerr, "cannot write the PDF cache")
	}
	if err != nil {
		return report.Wrap(report.Conversion, err, fmt.Sprintf("cannot select pages %s of the PDF", ranges))
	}
	return nil
}
