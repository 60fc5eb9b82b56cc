package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// The probes at the root, the Kubernetes convention: GET /livez says the
// process serves (never asks the database: a database outage must not get
// every replica restarted), GET /readyz says whether its dependencies
// answer (the metadata store, the bucket, the engines startable). Both are
// open without a token, even with auth.reads, and exempt from the Host
// allow-list (a kubelet or load balancer probes by address). They answer
// 200 or 503 whatever error_status says: a probe needs the status.

// Dependency is one thing /readyz checks.
type Dependency struct {
	// Name is the dependency's role: store, bucket, chromium, office.
	Name string `json:"name"`
	// Kind is what fills the role: bbolt or postgres, s3, the engine.
	Kind string `json:"kind"`
	// Up: it answered the last check (for engines: they can start here,
	// their programs installed and the sandbox probe passed).
	Up bool `json:"up"`
	// Excluded: the probe was asked to ignore it (?exclude=name).
	Excluded bool `json:"excluded,omitempty"`
	// Error says what failed when Up is false.
	Error string `json:"error,omitempty"`
	// CheckedAt is when it was last checked, UTC, RFC 3339.
	CheckedAt string `json:"checkedAt"`
}

// Health is the daemon's side of the probes.
type Health struct {
	// Live reports why the process cannot serve (nil: it can). Nil Live:
	// answering at all is proof enough.
	Live func(ctx context.Context) error
	// Ready checks every dependency (a recent result may be reused). Nil:
	// there are none to check.
	Ready func(ctx context.Context) []Dependency
}

// probePaths are served whatever the Host header says.
func probePath(p string) bool { return p == "/livez" || p == "/readyz" }

type liveBody struct {
	Status  string `json:"status"` // live
	Version string `json:"version"`
}

type readyBody struct {
	Status       string       `json:"status"` // ready or unavailable
	Dependencies []Dependency `json:"dependencies"`
	// Error and Type are the API's error object when not ready, so that a
	// client that reads error bodies reads this one too.
	Error string `json:"error,omitempty"`
	Type  string `json:"type,omitempty"`
}

func (s *Server) livez(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Health.Live != nil {
		if err := s.cfg.Health.Live(r.Context()); err != nil {
			noteError(r.Context(), report.Unavailable)
			w.Header().Set("Retry-After", retryAfter)
			writeJSON(w, http.StatusServiceUnavailable, ErrorBody{Error: string(report.Unavailable) + ": " + err.Error(), Type: string(report.Unavailable)})
			return nil
		}
	}
	p, err := s.svc.Ping(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, liveBody{Status: "live", Version: p.Version})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	exclude := map[string]bool{}
	for _, v := range r.URL.Query()["exclude"] {
		for _, name := range strings.Split(v, ",") {
			exclude[strings.TrimSpace(name)] = true
		}
	}
	deps := []Dependency{}
	if s.cfg.Health.Ready != nil {
		deps = slices.Clone(s.cfg.Health.Ready(r.Context()))
	}
	var down []string
	for i := range deps {
		d := &deps[i]
		if exclude[d.Name] {
			d.Excluded = true
			continue
		}
		if !d.Up {
			down = append(down, d.Name+" ("+d.Kind+"): "+d.Error)
		}
	}
	body := readyBody{Status: "ready", Dependencies: deps}
	status := http.StatusOK
	if len(down) > 0 {
		status = http.StatusServiceUnavailable
		body.Status, body.Type = "unavailable", string(report.Unavailable)
		body.Error = body.Type + ": not ready: " + strings.Join(down, "; ")
		noteError(r.Context(), report.Unavailable)
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, body)
	return nil
}
