package service

import (
	"context"
	"io"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
)

// BackfillCounts is what BackfillResults did, report by report.
type BackfillCounts struct {
	Reports int `json:"reports"` // reports looked at (every report, of every type)
	Had     int `json:"had"`     // already had per-test results: left as they are
	Filled  int `json:"filled"`  // results read from the stored files and stored
	None    int `json:"none"`    // html reports whose generator lists no per-test results
	Skipped int `json:"skipped"` // not html (no generator lists results in them)
	Failed  int `json:"failed"`  // could not be read (a missing file): logged, left
}

// BackfillResults reads and stores per-test results (detect.Results) for
// every html report that has none, from its stored file or site, as an
// upload would have. It is idempotent and resumable: a report that has
// results is left alone, so a run that stopped half-way (or a second run)
// only does what is left. each, when not nil, is told every report's
// outcome ("had", "filled", "none", "skipped", "failed").
func (s *Service) BackfillResults(ctx context.Context, each func(id int64, outcome string)) (BackfillCounts, error) {
	var n BackfillCounts
	recs, err := s.meta.Reports(ctx, nil)
	if err != nil {
		return n, err
	}
	tell := func(id int64, outcome string, count *int) {
		*count++
		if each != nil {
			each(id, outcome)
		}
	}
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		n.Reports++
		if rec.FileType != report.HTML {
			tell(rec.ID, "skipped", &n.Skipped)
			continue
		}
		had, err := s.meta.Results(ctx, rec.ID)
		switch {
		case report.IsKind(err, report.NotFound): // deleted meanwhile
			tell(rec.ID, "skipped", &n.Skipped)
			continue
		case err != nil:
			return n, err
		case had != nil:
			tell(rec.ID, "had", &n.Had)
			continue
		}
		res, err := s.readResults(ctx, rec)
		if err != nil {
			s.log.Warn("backfill-results: cannot read the report", "report", rec.ID, "err", err)
			tell(rec.ID, "failed", &n.Failed)
			continue
		}
		if res == nil {
			tell(rec.ID, "none", &n.None)
			continue
		}
		if err := s.meta.SetResults(ctx, rec.ID, res); err != nil {
			if report.IsKind(err, report.NotFound) {
				tell(rec.ID, "skipped", &n.Skipped)
				continue
			}
			return n, err
		}
		tell(rec.ID, "filled", &n.Filled)
	}
	return n, nil
}

// readResults detects a stored html report's generator and reads its
// per-test results, as the upload does.
func (s *Service) readResults(ctx context.Context, rec report.ReportRecord) (*report.Results, error) {
	if rec.IsSite() {
		m, err := s.manifestOf(ctx, rec)
		if err != nil {
			return nil, err
		}
		res := s.detectSite(ctx, rec.ID, m).results
		return res, nil
	}
	// Checked once here so that a missing file counts as failed, not as a
	// report without results.
	o, err := s.open(ctx, rec.FilePath)
	if err != nil {
		return nil, err
	}
	o.Close()
	files := []string{"report.html"}
	open := func(string) (io.ReadCloser, error) { return s.open(ctx, rec.FilePath) }
	g, _ := detect.Site(files, open)
	return detect.Results(g, files, open), nil
}
