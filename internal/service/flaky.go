package service

import (
	"context"

	"github.com/reportd/reportd/internal/report"
)

// flakyTests applies report.FlakyTests to head: the runs of its commit
// among the identity's report.SameCommitScan newest reports up to it, and the
// last report.FlakyWindow runs of its branch.
func (s *Service) flakyTests(ctx context.Context, head *report.ReportRecord, headRes *report.Results) ([]report.TestRef, error) {
	if headRes == nil {
		return []report.TestRef{}, nil
	}
	branch := ""
	if head.Branch != nil {
		branch = *head.Branch
	}
	q := report.HistoryQuery{Project: head.ProjectID, Name: head.Name, Type: &head.FileType, Before: head.ID + 1}
	q.Branch, q.Limit = &branch, report.FlakyWindow
	onBranch, err := s.meta.History(ctx, q)
	if err != nil {
		return nil, err
	}
	cache := map[int64]*report.Results{head.ID: headRes}
	results := func(rs []report.ReportRecord, keep func(*report.ReportRecord) bool) ([]*report.Results, error) {
		var out []*report.Results
		for i := range rs {
			if !keep(&rs[i]) {
				continue
			}
			res, ok := cache[rs[i].ID]
			if !ok {
				if res, err = s.meta.Results(ctx, rs[i].ID); err != nil && !report.IsKind(err, report.NotFound) {
					return nil, err
				}
				cache[rs[i].ID] = res
			}
			out = append(out, res)
		}
		return out, nil
	}
	window, err := results(onBranch, func(*report.ReportRecord) bool { return true })
	if err != nil {
		return nil, err
	}
	var same []*report.Results
	if head.Commit != nil {
		q.Branch, q.Limit = nil, report.SameCommitScan
		recent, err := s.meta.History(ctx, q)
		if err != nil {
			return nil, err
		}
		if same, err = results(recent, func(r *report.ReportRecord) bool { return r.Commit != nil && *r.Commit == *head.Commit }); err != nil {
			return nil, err
		}
	}
	return report.FlakyTests(headRes, same, window), nil
}
