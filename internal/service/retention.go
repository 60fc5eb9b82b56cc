package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// pruneWorkers is how many reports a prune deletes at once. Each goes
// through DeleteReport, whose transactions bbolt batches, so a large
// prune commits a few dozen rows per fsync instead of one, and each
// write transaction stays short: readers are never blocked.
const pruneWorkers = 32

// PruneRequest asks for one project's prune (ProjectID set) or every
// project's. Override sits on top of each project's policy (its nil
// fields inherit). DryRun plans without deleting.
type PruneRequest struct {
	ProjectID *int64
	Override  report.Retention
	DryRun    bool
	// Trigger names who asked, for the log line ("api", "sweeper").
	Trigger string
}

// RetentionDefault is the server-wide policy (config retention.*).
func (s *Service) RetentionDefault() report.Policy { return s.cfg.Retention }

// effective is a project's policy after inheritance.
func (s *Service) effective(p report.Project) report.Policy {
	if p.Retention == nil {
		return s.cfg.Retention
	}
	return p.Retention.Over(s.cfg.Retention)
}

// GetRetention is a project's stored and effective policy.
func (s *Service) GetRetention(ctx context.Context, id int64) (report.RetentionView, error) {
	p, err := s.meta.Project(ctx, id)
	if err != nil {
		return report.RetentionView{}, err
	}
	return s.view(p), nil
}

// SetRetention replaces a project's stored policy; a zero Retention
// removes it (the server default applies again).
func (s *Service) SetRetention(ctx context.Context, id int64, r report.Retention) (report.RetentionView, error) {
	if err := r.Check(); err != nil {
		return report.RetentionView{}, err
	}
	p, _, err := s.meta.UpdateProject(ctx, id, report.ProjectChange{Retention: &r})
	if err != nil {
		return report.RetentionView{}, err
	}
	return s.view(p), nil
}

func (s *Service) view(p report.Project) report.RetentionView {
	v := report.RetentionView{Effective: s.effective(p)}
	if p.Retention != nil {
		v.Retention = *p.Retention
	}
	return v
}

// Prune applies retention now: it plans each project from a snapshot of
// its reports and deletes the planned reports one by one through
// DeleteReport, the path of DELETE /api/reports/{id}, so counters, the
// latest index, files and cached PDFs stay exact. Reports deleted by
// someone else meanwhile are skipped. Only one prune that deletes runs at
// a time; another gets a ServiceUnavailableError at once. A dry run
// deletes nothing and never waits.
func (s *Service) Prune(ctx context.Context, req PruneRequest) (report.PruneResult, error) {
	res := report.PruneResult{DryRun: req.DryRun, Reports: []report.PruneItem{}}
	if err := req.Override.Check(); err != nil {
		return res, err
	}
	if !req.DryRun {
		if !s.pruneMu.TryLock() {
			return res, report.Errorf(report.Unavailable, "a retention pass is running; try again when it has finished")
		}
		defer s.pruneMu.Unlock()
	}
	start := time.Now()
	var (
		projects []report.Project
		err      error
	)
	if req.ProjectID != nil {
		var p report.Project
		p, err = s.meta.Project(ctx, *req.ProjectID)
		projects = []report.Project{p}
	} else {
		projects, err = s.meta.Projects(ctx)
	}
	if err != nil {
		return res, err
	}
	now := s.cfg.Clock.NowLocal()
	for _, p := range projects {
		policy := req.Override.Over(s.effective(p))
		res.Projects++
		if !policy.Removes() {
			continue
		}
		recs, err := s.meta.Reports(ctx, &p.ID)
		if report.IsKind(err, report.NotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return s.pruned(res, req, start, err)
		}
		plan := report.PlanRetention(recs, policy, now)
		if !req.DryRun {
			plan, err = s.deleteAll(ctx, plan)
		}
		res.Reports = append(res.Reports, plan...)
		for _, it := range plan {
			res.Bytes += it.Size
		}
		if err != nil {
			return s.pruned(res, req, start, err)
		}
	}
	return s.pruned(res, req, start, nil)
}

// pruned logs a prune that deleted, tells the hook, and returns.
func (s *Service) pruned(res report.PruneResult, req PruneRequest, start time.Time, err error) (report.PruneResult, error) {
	if req.DryRun {
		return res, err
	}
	took := time.Since(start)
	attrs := []any{"trigger", req.Trigger, "projects", res.Projects, "reports_removed", len(res.Reports),
		"bytes_freed", res.Bytes, "duration", took.Round(time.Millisecond)}
	if req.ProjectID != nil {
		attrs = append(attrs, "project", *req.ProjectID)
	}
	switch {
	case errors.Is(err, context.Canceled):
		s.log.Info("retention pass interrupted (shutdown or the client went away)", attrs...)
	case err != nil:
		s.log.Warn("retention pass stopped", append(attrs, "err", err)...)
	default:
		s.log.Info("retention pass", attrs...)
	}
	if s.cfg.OnPrune != nil {
		s.cfg.OnPrune(res, took, err)
	}
	return res, err
}

// deleteAll deletes the planned reports through DeleteReport with a few
// workers and returns the items it deleted, in plan order. It stops at
// the first error other than NotFound, or when ctx ends.
func (s *Service) deleteAll(ctx context.Context, plan []report.PruneItem) ([]report.PruneItem, error) {
	done := make([]bool, len(plan))
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(pruneWorkers, len(plan)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := s.DeleteReport(ctx, plan[i].ID)
				mu.Lock()
				switch {
				case err == nil:
					done[i] = true
				case report.IsKind(err, report.NotFound):
				case firstErr == nil:
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range plan {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	out := plan[:0:0]
	for i, ok := range done {
		if ok {
			out = append(out, plan[i])
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return out, firstErr
}
