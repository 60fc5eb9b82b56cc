package content

import (
	"container/list"
	"strconv"
	"sync"

	"github.com/reportd/reportd/internal/site"
)

// Defaults of the object cache (Config.CacheObjectMax, Config.CacheBytes).
const (
	// DefaultCacheObjectMax is the largest object kept in memory: the
	// stylesheets, scripts, small pages and JSON that make up most of a
	// report site's requests.
	DefaultCacheObjectMax = 128 << 10
	// DefaultCacheBytes caps the bytes of all objects kept.
	DefaultCacheBytes = 32 << 20
)

// objectCache keeps small content objects (a site file's identity bytes or
// one of its precompressed variants) in memory by storage key (site.File.Key:
// the sha256, plus the encoding for a variant). A content object never
// changes under its key, so a hit is what storage would return; the
// manifest (which says whether a report has the file at all, and access
// control) is checked on every request before the cache is asked. At most
// maxBytes are kept, each object counted as its body plus entryOverhead
// (its key, header values and bookkeeping), so many tiny objects stay
// bounded too; the least recently used go first.
type objectCache struct {
	maxObject, maxBytes int64
	overhead            int64 // counted per object besides its body

	mu    sync.Mutex
	m     map[string]*list.Element
	lru   list.List // of *cachedObject, most recently used first
	bytes int64
}

// entryOverhead is about what one entry costs besides its body: the key
// and ETag strings (~70 bytes each), the list element, the map slot and
// the header value slices.
const entryOverhead = 320

// cachedObject is one object's bytes and the header values that only
// depend on them, made once.
type cachedObject struct {
	key    string
	body   []byte
	etag   []string // `"sha256"` or `"sha256.enc"`
	length []string // len(body)
}

func newObjectCache(maxObject, maxBytes int64) *objectCache {
	if maxObject > maxBytes {
		maxObject = maxBytes
	}
	return &objectCache{maxObject: maxObject, maxBytes: maxBytes, overhead: entryOverhead, m: map[string]*list.Element{}}
}

// fits tells whether an object of size bytes is kept.
func (c *objectCache) fits(size int64) bool { return c != nil && size >= 0 && size <= c.maxObject }

func (c *objectCache) get(key string) *cachedObject {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.touch(c.m[key])
}

// getFile is get(f.Key()) without making the key string.
func (c *objectCache) getFile(f site.File) *cachedObject {
	if c == nil {
		return nil
	}
	var buf [160]byte
	key := f.AppendKey(buf[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.touch(c.m[string(key)])
}

// touch marks el (nil: a miss) as the most recently used. c.mu is held.
func (c *objectCache) touch(el *list.Element) *cachedObject {
	if el == nil {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cachedObject)
}

// put keeps body under key (with etag, the ETag's value without quotes)
// and returns the entry to serve: the one already kept if another request
// loaded it first.
func (c *objectCache) put(key, etag string, body []byte) *cachedObject {
	o := &cachedObject{key: key, body: body, etag: []string{`"` + etag + `"`},
		length: []string{strconv.Itoa(len(body))}}
	if !c.fits(int64(len(body))) {
		return o
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*cachedObject)
	}
	cost := c.cost(o)
	if cost > c.maxBytes {
		return o
	}
	for c.bytes+cost > c.maxBytes && c.lru.Len() > 0 {
		old := c.lru.Remove(c.lru.Back()).(*cachedObject)
		delete(c.m, old.key)
		c.bytes -= c.cost(old)
	}
	c.m[key] = c.lru.PushFront(o)
	c.bytes += cost
	return o
}

// forget drops key (its object could not be served).
func (c *objectCache) forget(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.lru.Remove(el)
		delete(c.m, key)
		c.bytes -= c.cost(el.Value.(*cachedObject))
	}
}

func (c *objectCache) cost(o *cachedObject) int64 { return int64(len(o.body)) + c.overhead }

// stats are the number of objects kept and the bytes they count (tests).
func (c *objectCache) stats() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
