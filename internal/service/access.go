package service

import (
	"context"
)

// ReportProject is the project a report belongs to (one row read, no
// file), for authorising project-limited tokens.
func (s *Service) ReportProject(ctx context.Context, id int64) (int64, error) {
	rec, err := s.meta.Report(ctx, id)
	return rec.ProjectID, err
}
