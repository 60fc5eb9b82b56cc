package engine

import (
	"bytes"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// MemCap enforces convert.max_worker_rss while jobs run; the checks of
// chromium/memcheck.go act between jobs only, and a page with a few Web Workers
// held 1.6 GiB against a 1 GiB limit inside one job. The engine's
// supervisor holds it (supervisor.watch); it is an interface so that a
// cgroup can take over where the machine delegates one. RendererSampler is
// the one that works everywhere.
type MemCap interface {
	// begin watches the process tree at root while a job runs in it, until
	// end is called. mark is to be handed to stoppedSince after the job.
	begin(root int) (mark int64, end func())
	// stoppedSince reports whether a renderer was stopped for memory since
	// mark, and the memory it had then.
	stoppedSince(mark int64) (stopped bool, rss int64)
}

// RendererSampler samples the memory (PSS) of each renderer process of
// the browsers (process trees) that jobs run on, every interval while any
// job runs, and kills a renderer over the limit. A job runs in a browser context of its
// own, so its renderer is its own: the kill ends that job's page (Chromium
// reports the target crashed; chromium/chromium_page.go), and the browser, its
// other pages and the next job go on. V8's heaps are capped too
// (launchOptions: --max-old-space-size), so a runaway script usually dies
// in V8 before it reaches the limit.
type RendererSampler struct {
	limit    int64
	interval time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	watched map[int]int // jobs running on each browser, by its root PID
	running bool        // the sampling goroutine

	stops atomic.Int64 // renderers killed so far
	last  atomic.Int64 // the memory of the last one
}

func NewRendererSampler(limit int64, log *slog.Logger) *RendererSampler {
	return &RendererSampler{limit: limit, interval: 200 * time.Millisecond, log: log, watched: map[int]int{}}
}

func (s *RendererSampler) begin(root int) (int64, func()) {
	mark := s.stops.Load()
	if s.limit <= 0 || root <= 0 {
		return mark, func() {}
	}
	s.mu.Lock()
	s.watched[root]++
	if !s.running {
		s.running = true
		go s.sample()
	}
	s.mu.Unlock()
	var once sync.Once
	return mark, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.watched[root]--; s.watched[root] <= 0 {
				delete(s.watched, root)
			}
		})
	}
}

func (s *RendererSampler) stoppedSince(mark int64) (bool, int64) {
	if s.stops.Load() > mark {
		return true, s.last.Load()
	}
	return false, 0
}

// sample runs while any job is watched.
func (s *RendererSampler) sample() {
	for {
		s.mu.Lock()
		if len(s.watched) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		pids := make([]int, 0, len(s.watched))
		for root := range s.watched {
			pids = append(pids, root)
		}
		s.mu.Unlock()
		kids := procChildren()
		for _, root := range pids {
			for _, rp := range renderers(root, kids) {
				r := rp.pid
				// Plain RSS is cheap but counts shared pages in full; the
				// exact PSS decides once it is over.
				if rss := rssOf(r); rss > s.limit && pssOrRSS(r, rss) > s.limit {
					// Killed only if, once pinned, it is still the renderer
					// found under its parent (pidfd_linux.go).
					if killIf(r, func() bool { return parentOf(r) == rp.parent && isRenderer(r) }) {
						s.last.Store(rss)
						s.stops.Add(1)
						s.log.Warn("Chromium renderer stopped over the memory limit", "pid", r,
							"rss", ApproxSize(rss), "limit", ApproxSize(s.limit), "setting", "convert.max_worker_rss")
					}
				}
			}
		}
		time.Sleep(s.interval)
	}
}

// renderers lists the renderer processes among root's descendants, each
// with its parent.
func renderers(root int, kids map[int][]int) []proc {
	var out []proc
	stack := []proc{}
	for _, k := range kids[root] {
		stack = append(stack, proc{pid: k, parent: root})
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if isRenderer(p.pid) {
			out = append(out, p)
		}
		for _, k := range kids[p.pid] {
			stack = append(stack, proc{pid: k, parent: p.pid})
		}
	}
	return out
}

// isRenderer reports whether pid is a Chromium renderer process.
func isRenderer(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.Contains(b, []byte("--type=renderer"))
}

// rssOf is a process's resident memory in bytes (0 if it is gone).
func rssOf(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return pages * int64(os.Getpagesize())
}

// pssOrRSS is pid's proportional set size, or rss where it cannot be read.
func pssOrRSS(pid int, rss int64) int64 {
	if v := pssOf(pid); v > 0 {
		return v
	}
	return rss
}

// V8HeapMiB is the cap of each V8 heap (a page's, each worker's) in MiB:
// half the memory limit, at least 128 MiB; 0 without a limit.
func V8HeapMiB(limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return max(128, limit/2>>20)
}
