package service

import (
	"context"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/site"
)

// SweepSites is the bucket sweep's step for report sites (storage:
// postgres+s3, where the start-up sweep leaves the store alone). It
// deletes the manifests no row owns that are older than grace (an ingest
// whose row never committed: a replica killed in between, a failed
// commit), then runs site GC, which removes the content objects no
// manifest references any more (after sites.gc_grace). It returns the
// manifests removed.
func (s *Service) SweepSites(ctx context.Context, grace time.Duration) ([]string, site.GCStats, error) {
	// Under the GC's exclusive site lock: no ingest is then between
	// writing its manifest and committing its row, in this daemon or any
	// other, so a manifest no row owns now is never owned (grace or not).
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	unlock, err := s.lockSites(ctx, true)
	if err != nil {
		return nil, site.GCStats{}, err
	}
	defer unlock()
	s.gcRuns.Add(1)
	defer s.gcRuns.Add(1)
	refs := map[string]bool{}
	if err := s.meta.FilePaths(ctx, func(p string) error { refs[p] = true; return nil }); err != nil {
		return nil, site.GCStats{}, err
	}
	var stale []string
	cutoff := time.Now().Add(-grace)
	err = s.blobs.Walk(ctx, site.ManifestPrefix, func(in blob.Info) error {
		if !refs[files.UploadsPrefix+in.Key] && in.ModTime.Before(cutoff) {
			stale = append(stale, in.Key)
		}
		return nil
	})
	if err != nil {
		return nil, site.GCStats{}, err
	}
	var removed []string
	for _, key := range stale {
		if err := site.Delete(ctx, s.blobs, key); err != nil {
			return removed, site.GCStats{}, err
		}
		s.log.Info("bucket sweep: removed a site manifest no report owns", "key", key)
		removed = append(removed, key)
	}
	st, err := site.GC(ctx, s.blobs, s.gcOptions())
	return removed, st, err
}
