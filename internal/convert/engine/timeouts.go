package engine

import (
	"fmt"
	"os"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// TimedOut is the ConversionError of a job that ran past
// convert.job_timeout: it names the setting and the size of what was being
// converted, so an operator can tell a huge report from a hanging one.
// what is the input ("the document", "the Markdown", "the site's page
// a.html"); size is its size in bytes, <0 when unknown.
func TimedOut(err error, what string, size int64, timeout time.Duration) error {
	of := ""
	if size >= 0 {
		of = " (" + ApproxSize(size) + ")"
	}
	return report.Wrap(report.Conversion, err, fmt.Sprintf(
		"converting %s%s timed out after %s (convert.job_timeout): it is too costly to render; make it smaller or raise convert.job_timeout",
		what, of, timeout))
}

// ApproxSize formats n bytes for a person: "812 bytes", "400.0 KiB", "1.5 GiB".
func ApproxSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// FileSize is the size of the file at name, -1 when it cannot be read.
func FileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return -1
	}
	return fi.Size()
}
