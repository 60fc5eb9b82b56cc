package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
)

// How often the dependencies are checked while serving, and how long one
// check may take. /readyz answers from the latest round, at once: a probe
// with a 1 s timeout must not wait for a bucket that does not answer.
const (
	readyInterval = 5 * time.Second
	checkTimeout  = 4 * time.Second
	// liveTimeout bounds the liveness check of the bbolt store: longer
	// means the process is wedged (a stuck lock).
	liveTimeout = 10 * time.Second
)

// dependency is one thing /readyz checks: name is its role (store,
// bucket, chromium, office), kind what fills it. check returns a short,
// safe reason for the probe's anonymous callers (detail goes to the log).
type dependency struct {
	name, kind string
	check      func(ctx context.Context) (reason string, err error)
}

// readiness checks the dependencies in rounds and keeps the latest
// results for /readyz and the reportd_dependency_up gauge.
type readiness struct {
	deps  []dependency
	log   *slog.Logger
	gauge *prometheus.GaugeVec

	mu   sync.Mutex
	last []httpapi.Dependency
}

func newReadiness(reg prometheus.Registerer, log *slog.Logger, deps []dependency) *readiness {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "reportd_dependency_up",
		Help: "1 when the dependency answered its last check (every 5s; engines: startable), else 0: store (bbolt or postgres), bucket (s3), chromium, office.",
	}, []string{"dependency"})
	reg.MustRegister(g)
	return &readiness{deps: deps, log: log, gauge: g}
}

// check runs one round, every dependency at once, and records it.
func (r *readiness) check(ctx context.Context) []httpapi.Dependency {
	out := make([]httpapi.Dependency, len(r.deps))
	var wg sync.WaitGroup
	for i, d := range r.deps {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			reason, err := d.check(cctx)
			out[i] = httpapi.Dependency{Name: d.name, Kind: d.kind, Up: err == nil, Error: reason,
				CheckedAt: time.Now().UTC().Format(time.RFC3339)}
			if err != nil && out[i].Error == "" {
				out[i].Error = "check failed"
			}
			r.note(d, err)
		})
	}
	wg.Wait()
	r.mu.Lock()
	prev := r.last
	r.last = out
	r.mu.Unlock()
	for i, d := range out {
		up := 0.0
		if d.Up {
			up = 1
		}
		r.gauge.WithLabelValues(d.Name).Set(up)
		if prev == nil && !d.Up {
			r.log.Warn("dependency is down", "dependency", d.Name, "kind", d.Kind, "reason", d.Error)
		} else if prev != nil && prev[i].Up != d.Up {
			if d.Up {
				r.log.Info("dependency is up again", "dependency", d.Name, "kind", d.Kind)
			} else {
				r.log.Warn("dependency is down", "dependency", d.Name, "kind", d.Kind, "reason", d.Error)
			}
		}
	}
	return out
}

// note logs a failed check's detail (debug: a round every 5 s).
func (r *readiness) note(d dependency, err error) {
	if err != nil {
		r.log.Debug("dependency check failed", "dependency", d.name, "err", err)
	}
}

// current is the latest round (one is run if there was none yet).
func (r *readiness) current(ctx context.Context) []httpapi.Dependency {
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	if last == nil {
		return r.check(ctx)
	}
	return last
}

// run checks every readyInterval until ctx ends.
func (r *readiness) run(ctx context.Context) {
	every(ctx, readyInterval, func() { r.check(ctx) })
}

// dependencies lists what this daemon depends on, in a fixed order.
func (m *Server) dependencies(bucket *s3store.Store) []dependency {
	var deps []dependency
	meta := metaBackendOf(&m.Config)
	deps = append(deps, dependency{name: "store", kind: meta.kind, check: func(ctx context.Context) (string, error) {
		return meta.check(ctx, m.store)
	}})
	if bucket != nil {
		deps = append(deps, dependency{name: "bucket", kind: "s3", check: func(ctx context.Context) (string, error) {
			err := bucket.Probe(ctx)
			var p *s3store.Problem
			switch {
			case err == nil:
				return "", nil
			case errors.As(err, &p) && p.Unreachable:
				return "the S3 server does not answer", err
			case errors.As(err, &p):
				return "the S3 server refuses: " + p.Code, err
			}
			return "the S3 server does not answer", err
		}})
	}
	if m.conv != nil {
		engines := m.conv.Startable()
		names := make([]string, 0, len(engines))
		for name := range engines {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			deps = append(deps, dependency{name: name, kind: "engine", check: func(context.Context) (string, error) {
				err := m.conv.Startable()[name]
				if err != nil {
					return report.MessageOf(err), err
				}
				return "", nil
			}})
		}
	}
	return deps
}

// live is what /livez and the systemd watchdog vouch for: the process
// serves. It never asks PostgreSQL or the bucket: an outage of either must
// not get every replica restarted at once. With bbolt the store lives in
// the process, so a store that stopped answering is the process wedged.
func (m *Server) live(ctx context.Context) error {
	if meta := metaBackendOf(&m.Config); meta.inProcess {
		_, err := meta.check(ctx, m.store)
		return err
	}
	return nil
}

// checkPostgres is the readiness check of metadata_store: postgres.
func checkPostgres(ctx context.Context, store report.Maintainer) (string, error) {
	if err := store.Ping(ctx); err != nil {
		if pgstore.Unreachable(err) {
			return "PostgreSQL does not answer", err
		}
		return "PostgreSQL refuses the connection (see the daemon's log)", err
	}
	return "", nil
}

// checkBolt is the readiness and liveness check of metadata_store: bolt.
func checkBolt(ctx context.Context, store report.Maintainer) (string, error) {
	if err := boltLive(ctx, store); err != nil {
		return "the bbolt store does not answer", err
	}
	return "", nil
}

// boltLive: a read transaction of the bbolt store begins and ends within
// liveTimeout (or ctx).
func boltLive(ctx context.Context, s report.Maintainer) error {
	live, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	err := s.Ping(live)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return errors.New("the bbolt store did not answer a read within " + liveTimeout.String())
	}
	return err
}
