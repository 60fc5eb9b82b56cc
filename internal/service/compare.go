package service

import (
	"context"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Compare is GET /api/reports/{id}/compare: report id (the head) against
// a base chosen by base:
//
//	"" or "previous"  the newest earlier report of the head's identity
//	                  (name and type) on the head's branch
//	"branch:NAME"     the newest report of the identity on branch NAME
//	                  (the usual base of a pull request); the newest
//	                  before the head when that is the head itself
//	"<report id>"     that report, which must be in the head's project
//	                  (NotFound otherwise)
//
// When there is no such report the comparison has a nil Base and Delta
// and lists the head's failures as new. The test lists come from the
// per-test results stored at upload (empty when either side has none).
func (s *Service) Compare(ctx context.Context, id int64, base string) (report.Comparison, error) {
	head, err := s.meta.Report(ctx, id)
	if err != nil {
		return report.Comparison{}, err
	}
	b, err := s.compareBase(ctx, &head, base)
	if err != nil {
		return report.Comparison{}, err
	}
	headRes, err := s.meta.Results(ctx, head.ID)
	if err != nil {
		return report.Comparison{}, err
	}
	var baseRes *report.Results
	if b != nil {
		if baseRes, err = s.meta.Results(ctx, b.ID); err != nil {
			return report.Comparison{}, err
		}
	}
	c := report.Compare(&head.Report, headRes, baseReport(b), baseRes)
	flaky, err := s.flakyTests(ctx, &head, headRes)
	if err != nil {
		return report.Comparison{}, err
	}
	c.Flaky = flaky
	return c, nil
}

func baseReport(r *report.ReportRecord) *report.Report {
	if r == nil {
		return nil
	}
	return &r.Report
}

// compareBase finds Compare's base; nil when there is none.
func (s *Service) compareBase(ctx context.Context, head *report.ReportRecord, base string) (*report.ReportRecord, error) {
	q := report.HistoryQuery{Project: head.ProjectID, Name: head.Name, Type: &head.FileType, Limit: 1}
	branch := ""
	if head.Branch != nil {
		branch = *head.Branch
	}
	switch {
	case base == "" || base == "previous":
		q.Branch, q.Before = &branch, head.ID
	case strings.HasPrefix(base, "branch:"):
		b := strings.TrimPrefix(base, "branch:")
		if b == "" {
			return nil, report.Errorf(report.Validation, "base branch: needs a branch name (base=branch:main)")
		}
		if err := checkQueryMeta(nil, &b); err != nil {
			return nil, report.Errorf(report.Validation, "base branch:NAME: %s", report.MessageOf(err))
		}
		q.Branch = &b
		got, err := s.meta.History(ctx, q)
		if err != nil {
			return nil, err
		}
		if len(got) == 0 || got[0].ID != head.ID {
			return first(got), nil
		}
		q.Before = head.ID
	default:
		bid, err := report.ParseID("base", base)
		if err != nil {
			return nil, report.Errorf(report.Validation, "base must be previous, branch:{name} or a report id, got %q", base)
		}
		r, err := s.meta.Report(ctx, bid)
		if err != nil {
			return nil, err
		}
		if r.ProjectID != head.ProjectID { // not probed across projects
			return nil, report.NoSuch("report", bid)
		}
		return &r, nil
	}
	got, err := s.meta.History(ctx, q)
	if err != nil {
		return nil, err
	}
	return first(got), nil
}

func first(rs []report.ReportRecord) *report.ReportRecord {
	if len(rs) == 0 {
		return nil
	}
	return &rs[len(rs)-1]
}
