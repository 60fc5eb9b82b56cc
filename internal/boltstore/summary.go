package boltstore

import (
	"math"

	"github.com/reportd/reportd/internal/report"
)

// A row keeps the summary flat, as integers, so that the row scanner
// reads it on its fast path: the line coverage in hundredths of a percent.

func summaryOf(row *reportRow) *report.Summary {
	if row.Lines == nil && row.Passed == nil && row.Failed == nil && row.Skipped == nil && row.Flaky == nil {
		return nil
	}
	s := &report.Summary{Passed: row.Passed, Failed: row.Failed, Skipped: row.Skipped, Flaky: row.Flaky}
	if row.Lines != nil {
		s.Lines = ptrTo(float64(*row.Lines) / 100)
	}
	return s
}

func setSummary(row *reportRow, s *report.Summary) {
	if s.Empty() {
		return
	}
	row.Passed, row.Failed, row.Skipped, row.Flaky = s.Passed, s.Failed, s.Skipped, s.Flaky
	if s.Lines != nil {
		row.Lines = ptrTo(int64(math.Round(*s.Lines * 100)))
	}
}
