package content

import (
	"context"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/site"
)

// variantCache remembers which precompressed variants a content object
// has (Sites.SiteVariants), keyed by its sha256: made variants never
// change, so a finished answer is kept for positiveTTL; an unfinished one
// (variants queued, not made yet) only for negativeTTL, so a file is
// served compressed soon after its variants appear. At most max entries:
// when full, the map starts over.
type variantCache struct {
	sites Sites
	now   func() time.Time
	max   int

	mu sync.Mutex
	m  map[string]variantEntry
}

type variantEntry struct {
	v   site.Variants
	exp time.Time
}

const (
	variantPositiveTTL = 10 * time.Minute
	variantNegativeTTL = 5 * time.Second
	variantCacheMax    = 50_000
)

func newVariantCache(s Sites, now func() time.Time) *variantCache {
	return &variantCache{sites: s, now: now, max: variantCacheMax, m: map[string]variantEntry{}}
}

// get tells which variants f has; a lookup error is "none" (the identity
// bytes are served) and is not cached.
func (c *variantCache) get(ctx context.Context, id int64, f site.File) site.Variants {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[f.SHA256]
	c.mu.Unlock()
	if ok && now.Before(e.exp) {
		return e.v
	}
	v, err := c.sites.SiteVariants(ctx, id, f)
	if err != nil {
		return site.Variants{}
	}
	ttl := variantNegativeTTL
	if v.Done {
		ttl = variantPositiveTTL
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		c.m = map[string]variantEntry{}
	}
	c.m[f.SHA256] = variantEntry{v: v, exp: now.Add(ttl)}
	c.mu.Unlock()
	return v
}

// forget drops sha's entry (its variant could not be opened).
func (c *variantCache) forget(sha string) {
	c.mu.Lock()
	delete(c.m, sha)
	c.mu.Unlock()
}
