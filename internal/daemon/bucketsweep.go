package daemon

import (
	"context"

	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/bucketsweep"
	"github.com/reportd/reportd/internal/service"
)

// openBucketSweep builds the bucket sweep of storage: postgres+s3 on the
// open PostgreSQL store and bucket; extra are more steps for the same pass
// (Server.SweepSteps).
func (m *Server) openBucketSweep(st *s3store.Store, extra []bucketsweep.Step) error {
	sw, err := bucketsweep.New(bucketsweep.Config{
		Store:      st,
		Refs:       m.pg,
		Locker:     m.pg,
		Grace:      m.Config.Sweep.Grace,
		AbortStale: st.AbortStale,
		Steps:      extra,
		PDFPrefix:  service.PDFPrefix,
		Log:        m.Log,
		Registerer: m.Metrics.Registry,
	})
	if err != nil {
		return err
	}
	m.bucketSweep = sw
	return nil
}

// runBucketSweep sweeps the bucket every sweep.interval (first pass soon
// after start-up) until ctx ends; it returns at once without a bucket or
// with sweep.interval 0.
func (m *Server) runBucketSweep(ctx context.Context) {
	if m.bucketSweep == nil || m.Config.Sweep.Interval <= 0 {
		return
	}
	m.bucketSweep.Loop(ctx, m.Config.Sweep.Interval)
}

// SweepBucket runs one pass of the bucket sweep now (storage: postgres+s3;
// otherwise it does nothing).
func (m *Server) SweepBucket(ctx context.Context) (bucketsweep.Result, error) {
	if m.bucketSweep == nil {
		return bucketsweep.Result{}, nil
	}
	return m.bucketSweep.Once(ctx)
}
