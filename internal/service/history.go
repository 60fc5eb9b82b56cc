package service

import (
	"context"

	"github.com/reportd/reportd/internal/report"
)

// History is GET /api/projects/{id}/history: the newest q.Limit reports
// of q's identity, oldest first, as history points. q.Limit 0 is the
// default; above report.HistoryMaxLimit or below 0 is a ValidationError,
// as are an empty name and a name or branch no upload may have
// (checkQueryMeta). The project must exist (NotFound otherwise).
func (s *Service) History(ctx context.Context, q report.HistoryQuery) ([]report.HistoryPoint, error) {
	if q.Name == "" {
		return nil, report.Errorf(report.Validation, "name is required: the report name whose history to list (?name=coverage)")
	}
	if err := checkQueryMeta(&q.Name, q.Branch); err != nil {
		return nil, err
	}
	switch {
	case q.Limit == 0:
		q.Limit = report.HistoryDefaultLimit
	case q.Limit < 0 || q.Limit > report.HistoryMaxLimit:
		return nil, report.Errorf(report.Validation, "limit must be between 1 and %d, got %d", report.HistoryMaxLimit, q.Limit)
	}
	if _, err := s.meta.Project(ctx, q.Project); err != nil {
		return nil, err
	}
	recs, err := s.meta.History(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]report.HistoryPoint, len(recs))
	for i := range recs {
		out[i] = report.Point(&recs[i].Report)
	}
	if !q.Flaky {
		return out, nil
	}
	res := make([]*report.Results, len(recs))
	read := 0
	for i := len(recs) - 1; i >= 0 && read < report.ResultsReadBudget; i-- { // newest first
		if !report.MayHaveTests(recs[i].Summary) {
			continue // a coverage-only history stays one query
		}
		if res[i], err = s.meta.Results(ctx, recs[i].ID); err != nil && !report.IsKind(err, report.NotFound) {
			return nil, err
		}
		if res[i] != nil {
			read += len(res[i].Tests)
		}
	}
	report.MarkFlaky(out, res)
	return out, nil
}

// Results is report id's per-test results (nil when it has none).
func (s *Service) Results(ctx context.Context, id int64) (*report.Results, error) {
	return s.meta.Results(ctx, id)
}
