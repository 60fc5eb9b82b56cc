package convert

import (
	"container/list"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cache is the on-disk PDF cache: <dir>/<reportID>/<contentKey>-<variant>.pdf,
// with a least-recently-used index kept in memory and rebuilt from the
// directory at start, using each file's mtime as its last use. A hit only
// opens a file, so a cached repeat costs about a millisecond.
//
// Files are written to <dir>/.tmp and renamed into place, so a reader never
// sees half a PDF. They are not fsynced (that would cost milliseconds on every
// conversion); instead the rebuild drops any file that is not a complete PDF,
// which is what a crash can leave behind.
type cache struct {
	dir      string
	max      int64
	variants int // print variants (files with options) kept per report; <=0: no cap

	mu    sync.Mutex
	lru   *list.List // front = most recent; values are *cacheEntry
	byKey map[string]*list.Element
	total int64
	perID map[string]int // print variants per report directory
}

type cacheEntry struct {
	path    string
	size    int64
	touched time.Time // last mtime written, to limit Chtimes calls
}

// touchEvery bounds how often a hit rewrites a file's mtime, which only
// matters for the order the index is rebuilt in after a restart.
const touchEvery = time.Minute

func openCache(dir string, max int64, variants int) (*cache, error) {
	if dir == "" {
		return nil, errors.New("convert: CacheDir is required")
	}
	c := &cache{dir: dir, max: max, variants: variants, lru: list.New(), byKey: map[string]*list.Element{}, perID: map[string]int{}}
	if err := os.MkdirAll(c.tmpDir(), 0o755); err != nil {
		return nil, err
	}
	return c, c.rebuild()
}

func (c *cache) tmpDir() string { return filepath.Join(c.dir, ".tmp") }

// rebuild fills the index from the directory, oldest first, and removes what
// a crash left: temp files and incomplete PDFs.
func (c *cache) rebuild() error {
	if err := os.RemoveAll(c.tmpDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(c.tmpDir(), 0o755); err != nil {
		return err
	}
	type found struct {
		path string
		size int64
		mod  time.Time
	}
	var all []found
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == c.tmpDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".pdf") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if checkPDFFile(p) != nil {
			os.Remove(p)
			return nil
		}
		all = append(all, found{p, info.Size(), info.ModTime()})
		return nil
	})
	if err != nil {
		return err
	}
	// Oldest first, so PushFront leaves the newest at the front.
	slices.SortFunc(all, func(a, b found) int { return a.mod.Compare(b.mod) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range all {
		c.addLocked(&cacheEntry{path: f.path, size: f.size, touched: f.mod})
	}
	for dir := range c.perID {
		c.capVariantsLocked(dir, nil)
	}
	c.evictLocked(nil)
	return nil
}

// isVariant reports whether path is the PDF of a print with options
// (<key>-<variant>-<options>.pdf), not a report's default print
// (<key>-<variant>.pdf).
func isVariant(path string) bool {
	return strings.Count(strings.TrimSuffix(filepath.Base(path), ".pdf"), "-") >= 2
}

// addLocked puts e at the front of the index.
func (c *cache) addLocked(e *cacheEntry) *list.Element {
	el := c.lru.PushFront(e)
	c.byKey[e.path] = el
	c.total += e.size
	if isVariant(e.path) {
		c.perID[filepath.Dir(e.path)]++
	}
	return el
}

// removeLocked takes el out of the index; the file stays.
func (c *cache) removeLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.byKey, e.path)
	c.total -= e.size
	if isVariant(e.path) {
		dir := filepath.Dir(e.path)
		if c.perID[dir]--; c.perID[dir] <= 0 {
			delete(c.perID, dir)
		}
	}
}

// capVariantsLocked removes the least recently used print variants of the
// report in dir, other than keep, until at most c.variants remain. Anyone
// may ask for a print with new options, and each is a conversion and a
// file: without a cap, one reader could fill the cache with one report's
// variants and push every other report's PDF out. A report's default print
// is never removed for its variants.
func (c *cache) capVariantsLocked(dir string, keep *list.Element) {
	if c.variants <= 0 {
		return
	}
	for el := c.lru.Back(); el != nil && c.perID[dir] > c.variants; {
		prev := el.Prev()
		if e := el.Value.(*cacheEntry); el != keep && isVariant(e.path) && filepath.Dir(e.path) == dir {
			c.removeLocked(el)
			os.Remove(e.path)
		}
		el = prev
	}
}

// path is where the PDF of a report's content, rendered with options
// variant, lives.
func (c *cache) path(reportID int64, contentKey, variant string) string {
	return filepath.Join(c.dir, strconv.FormatInt(reportID, 10), contentKey+"-"+variant+".pdf")
}

// open returns the cached file at path, or nil on a miss.
func (c *cache) open(path string) *os.File {
	c.mu.Lock()
	el, ok := c.byKey[path]
	if ok {
		c.lru.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		// Removed behind our back: forget it.
		c.drop(path)
		return nil
	}
	e := el.Value.(*cacheEntry)
	if now := time.Now(); now.Sub(e.touched) > touchEvery {
		e.touched = now
		os.Chtimes(path, now, now)
	}
	return f
}

// tempFile is where an engine writes a PDF before put moves it into place.
func (c *cache) tempFile() (*os.File, error) {
	return os.CreateTemp(c.tmpDir(), "pdf-*.tmp")
}

// put moves the finished temp file into place and evicts the least recently
// used files until the total fits the cap again. The new file itself is
// never evicted by its own put, so the caller can still open it.
func (c *cache) put(tmp, path string) error {
	info, err := os.Stat(tmp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[path]; ok {
		c.removeLocked(el)
	}
	el := c.addLocked(&cacheEntry{path: path, size: info.Size(), touched: time.Now()})
	if isVariant(path) {
		c.capVariantsLocked(filepath.Dir(path), el)
	}
	c.evictLocked(el)
	return nil
}

func (c *cache) evictLocked(keep *list.Element) {
	if c.max <= 0 {
		return
	}
	for c.total > c.max {
		el := c.lru.Back()
		if el == nil || el == keep {
			return
		}
		e := el.Value.(*cacheEntry)
		c.removeLocked(el)
		// An open reader keeps its data: unlinking does not disturb it.
		os.Remove(e.path)
		os.Remove(filepath.Dir(e.path)) // only succeeds when empty
	}
}

func (c *cache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[path]; ok {
		c.removeLocked(el)
	}
}

// forget removes every cached PDF of a report.
func (c *cache) forget(reportID int64) error {
	dir := filepath.Join(c.dir, strconv.FormatInt(reportID, 10))
	c.mu.Lock()
	for p, el := range c.byKey {
		if filepath.Dir(p) == dir {
			c.removeLocked(el)
		}
	}
	c.mu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("convert: forget report %d: %w", reportID, err)
	}
	return nil
}

// size returns the number of files and their total bytes.
func (c *cache) size() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.total
}
