package content

import (
	"context"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/site"
)

// manifestCache keeps recently used manifests for ttl (as the site's
// view, whose files open through Sites.OpenSiteFile), so the requests of
// one page view (and a site's many assets) read the manifest once. Loads
// of one id share one call. Manifests are immutable; ttl bounds how long
// a deleted report is still served.
type manifestCache struct {
	sites Sites
	ttl   time.Duration
	now   func() time.Time
	max   int // entries kept; the oldest go first

	mu sync.Mutex
	m  map[int64]*cached
}

type cached struct {
	done chan struct{}
	at   time.Time
	view site.View
	err  error
}

func newManifestCache(s Sites, ttl time.Duration, now func() time.Time) *manifestCache {
	return &manifestCache{sites: s, ttl: ttl, now: now, max: 64, m: map[int64]*cached{}}
}

func (c *manifestCache) get(ctx context.Context, id int64) (site.View, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[id]
	if ok && e.at.Add(c.ttl).Before(now) {
		select {
		case <-e.done:
			ok = false // stale
		default: // still loading: share it
		}
	}
	if !ok {
		if len(c.m) >= c.max {
			c.evict(now)
		}
		e = &cached{done: make(chan struct{}), at: now}
		c.m[id] = e
		c.mu.Unlock()
		// The load is not tied to one request: others wait on it.
		var m site.Manifest
		m, e.err = c.sites.SiteManifest(context.WithoutCancel(ctx), id)
		e.view = site.NewView(m, func(ctx context.Context, f site.File) (blob.Object, error) {
			return c.sites.OpenSiteFile(ctx, id, f)
		})
		close(e.done)
		if e.err != nil {
			c.mu.Lock()
			if c.m[id] == e {
				delete(c.m, id) // errors are not kept
			}
			c.mu.Unlock()
		}
		return e.view, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.view, e.err
	case <-ctx.Done():
		return site.View{}, ctx.Err()
	}
}

// evict drops stale entries, or else the oldest loaded one. c.mu is held.
func (c *manifestCache) evict(now time.Time) {
	var oldest int64
	var at time.Time
	for id, e := range c.m {
		select {
		case <-e.done:
		default:
			continue
		}
		if e.at.Add(c.ttl).Before(now) {
			delete(c.m, id)
			continue
		}
		if at.IsZero() || e.at.Before(at) {
			oldest, at = id, e.at
		}
	}
	if len(c.m) >= c.max && !at.IsZero() {
		delete(c.m, oldest)
	}
}
